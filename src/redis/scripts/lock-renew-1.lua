-- lock-renew-1: extends a lock's TTL when the token still holds it. Returns 1 when renewed, 0 when lost.
-- KEYS[1]  the lock
-- ARGV     the owner token, the new TTL in ms
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
