-- lock-release-1: compare-and-delete, then tells the waiting acquires on the lock's channel (where the server has
-- DELEX IFEQ or DELIFEQ, locks/store.ts sends that and a PUBLISH instead). Returns 1 when released, 0 when the token no longer held it.
-- KEYS[1]  the lock (its name is also the channel its waiters listen on)
-- ARGV     the owner token
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', KEYS[1], '')
return 1
