-- idempotent-settle-1: ends a claim whose write did not record its outcome (src/ops/idempotent.ts).
-- KEYS[1]  the record
-- ARGV     the claiming request's token, then either nothing (release: the write did not run, a retry may) or
--          the outcome to record and its TTL (ms) (a list pop that waited outside a script)
-- Does nothing unless the record still holds the token: a write that did run has already replaced it.
if redis.call('HGET', KEYS[1], 's') ~= ARGV[1] then return 0 end
if ARGV[2] == nil then return redis.call('DEL', KEYS[1]) end
redis.call('HSET', KEYS[1], 's', 'done', 'r', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
