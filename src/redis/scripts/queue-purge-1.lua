-- queue-purge: removes messages, keeping the queue and its settings. KEYS[1] the base key; ARGV[1] the name (for its
-- event); ARGV[2] 'dead' (the dead letters) or 'all' (every message: ready, delayed, in flight, waiting, dead; their
-- receipts become unknown). Answers 'missing', or the number of messages removed.
if redis.call('EXISTS', B) == 0 then return 'missing' end
local removed
if ARGV[2] == 'dead' then
  local ids = redis.call('ZRANGE', X, 0, -1)
  for _, mid in ipairs(ids) do redis.call('HDEL', M, mid) end
  redis.call('DEL', X)
  removed = #ids
else
  removed = redis.call('HLEN', M)
  for _, g in ipairs(redis.call('SMEMBERS', G)) do redis.call('DEL', group_key(g)) end
  redis.call('DEL', S, M, D, L, X, G)
  redis.call('HSET', B, 'gw', 0)
  redis.call('XGROUP', 'CREATE', S, GROUP, '$', 'MKSTREAM')
end
if removed > 0 then changed(ARGV[1], 'queue', 'purge') end
return removed
