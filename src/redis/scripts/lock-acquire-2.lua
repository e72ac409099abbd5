-- lock-acquire-2: takes a free lock with the next fencing token. Returns {1, fence} when taken, {0, the holder's
-- fence, ms left} when held.
-- KEYS[1]  the lock: '<fence>.<secret>' with the TTL (the owner token is that value)
-- KEYS[2]  the lock's fencing counter, in the same slot; it never expires
-- ARGV     the secret, the TTL in ms
-- The token is max(counter + 1, Redis's clock in microseconds): it grows with each grant, and a primary promoted
-- without the last grants (asynchronous replication) still hands out larger ones while its clock runs ahead of
-- them, which a failover's seconds make sure of (up to a million grants a second per lock).
local held = redis.call('GET', KEYS[1])
if held then
  return {0, tonumber(string.match(held, '^(%d+)')) or 0, redis.call('PTTL', KEYS[1])}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local fence = math.max((tonumber(redis.call('GET', KEYS[2])) or 0) + 1, now)
local text = string.format('%.0f', fence)
redis.call('SET', KEYS[2], text)
redis.call('SET', KEYS[1], text .. '.' .. ARGV[1], 'PX', ARGV[2])
return {1, fence}
