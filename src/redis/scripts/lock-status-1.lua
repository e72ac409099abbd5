-- lock-status-1: a lock's holder without its secret. Returns {fence, ms left}, or nil when the lock is free.
-- KEYS[1]  the lock
local held = redis.call('GET', KEYS[1])
if not held then return nil end
return {tonumber(string.match(held, '^(%d+)')) or 0, redis.call('PTTL', KEYS[1])}
