-- typed-write-1: one write to a key of a given type, with its conditions and TTL rule, atomically.
-- KEYS[1]  the key
-- ARGV[1]  the expected Redis type: string | hash | set (a missing key is always accepted)
-- ARGV[2]  condition: '' none | 'absent' fail with KEY_EXISTS if the key exists | 'present' return nil if it does not
-- ARGV[3]  '1' to drop the old content first (replace), '0' to merge into it
-- ARGV[4]  TTL in seconds to set after the write, or '' to leave the expiry as the write leaves it
-- ARGV[5]  count command run after the write ('HLEN', 'SCARD') or ''
-- ARGV[6]  stride: arguments per item of a variadic command (2 for HSET, 1 for SADD), '0' to send them at once;
--          long argument lists are sent in chunks (Lua's unpack has a small limit) and integer replies summed
-- ARGV[7]  the write command; ARGV[8..] its arguments after the key
-- Returns {1 if the key existed before else 0, reply of the command, count or 0}.
local key = KEYS[1]
local actual = redis.call('TYPE', key)['ok']
local existed = actual ~= 'none'
if existed and actual ~= ARGV[1] then return redis.error_reply('WRONGTYPE_OF ' .. actual) end
if ARGV[2] == 'absent' and existed then return redis.error_reply('KEY_EXISTS the key exists') end
if ARGV[2] == 'present' and not existed then return nil end
if ARGV[3] == '1' and existed then redis.call('DEL', key) end

local stride, cmd, first = tonumber(ARGV[6]), ARGV[7], 8
local reply
if stride == 0 or #ARGV - first + 1 <= 1000 * stride then
  reply = redis.call(cmd, key, unpack(ARGV, first))
else
  reply = 0
  local chunk = 1000 * stride
  for i = first, #ARGV, chunk do
    reply = reply + redis.call(cmd, key, unpack(ARGV, i, math.min(i + chunk - 1, #ARGV)))
  end
end

if ARGV[4] ~= '' and redis.call('EXISTS', key) == 1 then redis.call('EXPIRE', key, ARGV[4]) end
local count = 0
if ARGV[5] ~= '' then count = redis.call(ARGV[5], key) end
return {existed and 1 or 0, reply, count}
