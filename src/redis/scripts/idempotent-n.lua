-- idempotent-n: one of our writing scripts run under an Idempotency-Key, its reply recorded in the same call, so
-- that no write is applied without its record (src/ops/idempotent.ts). src/redis/client.ts puts before it the feed
-- header, typed.lua, and INNER: each writing script's body as a function of (KEYS, ARGV), by its ioredis name.
-- KEYS[1]  the record (claimed by idempotent-claim-1); KEYS[2..] the inner script's keys
-- ARGV[1]  the claim's token; ARGV[2] the record's TTL in ms; ARGV[3] '1' to keep the claim when the key was missing
--          (a list pop that will wait: its outcome is recorded by idempotent-settle-1); ARGV[4] the inner script's
--          name; ARGV[5..] its arguments
-- Returns the inner script's reply; fails with IDEM_LOST (and runs nothing) when the record no longer holds the
-- token (the claim expired, or was released after a timeout while this call was on its way).
local record = KEYS[1]
if redis.call('HGET', record, 's') ~= ARGV[1] then return redis.error_reply('IDEM_LOST') end
local keys, argv = {}, {}
for i = 2, #KEYS do keys[i - 1] = KEYS[i] end
for i = 5, #ARGV do argv[i - 4] = ARGV[i] end
local ok, reply = pcall(INNER[ARGV[4]], keys, argv)
if not ok and type(reply) ~= 'table' then reply = redis.error_reply(tostring(reply)) end
-- A pop of a missing list (nil; {false, ETag} under typed_etag) that will wait: the claim stays.
if ARGV[3] == '1' and (reply == nil or (type(reply) == 'table' and reply[1] == false)) then return reply end

-- The reply, binary-safe: 'n' nil, 'i<integer>;', 's<bytes>:<string>', 'o..' status, 'e..' error, 'a<n>;' then
-- n replies. Converted as Redis converts a script's reply (numbers truncated, true is 1, an array ends at nil).
local out = {'R'}
local function put(v)
  local t = type(v)
  if t == 'table' then
    if v.err then out[#out + 1] = 'e' .. #v.err .. ':' .. v.err
    elseif v.ok then out[#out + 1] = 'o' .. #v.ok .. ':' .. v.ok
    else
      local n = 0
      while v[n + 1] ~= nil do n = n + 1 end
      out[#out + 1] = 'a' .. n .. ';'
      for i = 1, n do put(v[i]) end
    end
  elseif t == 'string' then out[#out + 1] = 's' .. #v .. ':' .. v
  elseif t == 'number' then out[#out + 1] = 'i' .. string.format('%d', v) .. ';'
  elseif v == true then out[#out + 1] = 'i1;'
  else out[#out + 1] = 'n' end
end
put(reply)
redis.call('HSET', record, 's', 'done', 'r', table.concat(out))
redis.call('PEXPIRE', record, ARGV[2])
return reply
