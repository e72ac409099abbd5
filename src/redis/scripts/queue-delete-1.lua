-- queue-delete: deletes a queue and every message of it. KEYS[1] the base key; ARGV[1] the name (for its event).
-- Answers 1 when it existed.
if redis.call('EXISTS', B) == 0 then return 0 end
for _, g in ipairs(redis.call('SMEMBERS', G)) do redis.call('DEL', group_key(g)) end
redis.call('DEL', B, S, M, D, L, X, U, UH, G)
changed(ARGV[1], 'queue', 'delete')
return 1
