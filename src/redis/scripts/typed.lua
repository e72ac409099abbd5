-- typed: a type-checked read or write of one key; the library that typed-read-1, typed-write-1 and
-- typed-batch-n are each prefixed with (src/redis/client.ts), so that every script runs the same code.

-- Checks the type of `key`, then runs one read command on it and reports its TTL.
-- argv[1]  the expected Redis type: string | hash | set
-- argv[2]  optional: the read command; argv[3..] its arguments after the key
-- Returns nil when the key does not exist, else {reply of the command (nil without one), TTL};
-- fails with "WRONGTYPE_OF <actual type>" when the key holds another type.
local function typed_read(key, argv)
  local actual = redis.call('TYPE', key)['ok']
  if actual == 'none' then return nil end
  if actual ~= argv[1] then return redis.error_reply('WRONGTYPE_OF ' .. actual) end
  local reply = false
  if #argv > 1 then reply = redis.call(argv[2], key, unpack(argv, 3)) end
  return {reply, redis.call('TTL', key)}
end

-- One write to `key` of a given type, with its conditions and TTL rule, atomically.
-- argv[1]  the expected Redis type: string | hash | set (a missing key is always accepted)
-- argv[2]  condition: '' none | 'absent' fail with KEY_EXISTS if the key exists | 'present' return nil if it does not
-- argv[3]  '1' to drop the old content first (replace), '0' to merge into it
-- argv[4]  TTL in seconds to set after the write, or '' to leave the expiry as the write leaves it
-- argv[5]  count command run after the write ('HLEN', 'SCARD') or ''
-- argv[6]  stride: arguments per item of a variadic command (2 for HSET, 1 for SADD), '0' to send them at once;
--          long argument lists are sent in chunks (Lua's unpack has a small limit) and integer replies summed
-- argv[7]  the write command; argv[8..] its arguments after the key
-- Returns {1 if the key existed before else 0, reply of the command, count or 0}.
local function typed_write(key, argv)
  local actual = redis.call('TYPE', key)['ok']
  local existed = actual ~= 'none'
  if existed and actual ~= argv[1] then return redis.error_reply('WRONGTYPE_OF ' .. actual) end
  if argv[2] == 'absent' and existed then return redis.error_reply('KEY_EXISTS the key exists') end
  if argv[2] == 'present' and not existed then return nil end
  if argv[3] == '1' and existed then redis.call('DEL', key) end

  local stride, cmd, first = tonumber(argv[6]), argv[7], 8
  local reply
  if stride == 0 or #argv - first + 1 <= 1000 * stride then
    reply = redis.call(cmd, key, unpack(argv, first))
  else
    reply = 0
    local chunk = 1000 * stride
    for i = first, #argv, chunk do
      reply = reply + redis.call(cmd, key, unpack(argv, i, math.min(i + chunk - 1, #argv)))
    end
  end

  if argv[4] ~= '' and redis.call('EXISTS', key) == 1 then redis.call('EXPIRE', key, argv[4]) end
  local count = 0
  if argv[5] ~= '' then count = redis.call(argv[5], key) end
  return {existed and 1 or 0, reply, count}
end
