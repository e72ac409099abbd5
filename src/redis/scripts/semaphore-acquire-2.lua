-- semaphore-acquire-2: takes one of `limit` places, with the next fencing token. Returns {1, fence} when taken,
-- {0, holders, ms until the first holder's TTL runs out} when every place is held.
-- KEYS[1]  the holders: a sorted set of owner tokens ('<fence>.<secret>') scored by their expiry (ms, Redis's clock)
-- KEYS[2]  the semaphore's fencing counter, in the same slot; it never expires (see lock-acquire-2.lua)
-- ARGV     the secret, the TTL in ms, the limit
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs)
local held = redis.call('ZCARD', KEYS[1])
if held >= tonumber(ARGV[3]) then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, held, tonumber(first[2]) - nowMs}
end
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local fence = math.max((tonumber(redis.call('GET', KEYS[2])) or 0) + 1, now)
local text = string.format('%.0f', fence)
redis.call('SET', KEYS[2], text)
redis.call('ZADD', KEYS[1], nowMs + tonumber(ARGV[2]), text .. '.' .. ARGV[1])
-- The set lives as long as its last holder.
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
return {1, fence}
