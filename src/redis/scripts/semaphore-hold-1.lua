-- semaphore-hold-1: renews (ARGV[2] > 0: the new TTL in ms) or releases (ARGV[2] = 0) a place, only while the owner
-- token holds it. A release tells the waiting acquires on the semaphore's channel. Returns 1, or 0 when lost.
-- KEYS[1]  the holders (see semaphore-acquire-2.lua), also the channel its waiters listen on
-- ARGV     the owner token, the new TTL in ms or 0
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expiry = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]))
if not expiry or expiry <= nowMs then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 0
end
local ttl = tonumber(ARGV[2])
if ttl == 0 then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('PUBLISH', KEYS[1], '')
  return 1
end
redis.call('ZADD', KEYS[1], 'XX', nowMs + ttl, ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
return 1
