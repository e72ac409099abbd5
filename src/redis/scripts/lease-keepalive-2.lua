-- lease-keepalive-2: sets a lease's TTL (and its attachment list's) when it still exists. Returns its attached
-- locks as {name, token, name, token, ...}, or false when the lease is gone (expired or revoked).
-- KEYS[1]  the lease (its value: its TTL in ms), KEYS[2] its attached locks (a hash: lock name -> owner token)
-- ARGV     the TTL in ms
if redis.call('PEXPIRE', KEYS[1], ARGV[1]) == 0 then return false end
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return redis.call('HGETALL', KEYS[2])
