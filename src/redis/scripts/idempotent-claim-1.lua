-- idempotent-claim-1: claims an Idempotency-Key's record before its write runs (src/ops/idempotent.ts).
-- KEYS[1]  the record (#svc:idem:...), a hash: s = the claiming request's token or 'done', f = the request's
--          fingerprint, r = the outcome (see idempotent-n.lua)
-- ARGV     the token, the fingerprint, how long the claim holds (ms) if its request never finishes
-- Returns {'new'} when this call claimed it; {'pending', fingerprint, ms left} while another request holds it;
-- {'done', fingerprint, outcome} once a request finished under it.
local s = redis.call('HGET', KEYS[1], 's')
if not s then
  redis.call('HSET', KEYS[1], 's', ARGV[1], 'f', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'new'}
end
local f = redis.call('HGET', KEYS[1], 'f')
if s ~= 'done' then return {'pending', f, redis.call('PTTL', KEYS[1])} end
return {'done', f, redis.call('HGET', KEYS[1], 'r')}
