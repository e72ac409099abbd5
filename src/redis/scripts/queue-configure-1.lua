-- queue-configure: creates a queue or changes its settings. KEYS[1] the queue's base key; ARGV[1] the queue's name
-- (with the key prefix, for its change event); ARGV[2] 'create' (answer 'exists' when it does), 'update' (answer
-- 'missing' when it does not) or 'put' (either); then setting, value pairs. Answers {created, settings} as JSON.
local name, mode = ARGV[1], ARGV[2]
local existed = redis.call('EXISTS', B) == 1
if existed and mode == 'create' then return 'exists' end
if not existed and mode == 'update' then return 'missing' end
if #ARGV > 2 then redis.call('HSET', B, unpack(ARGV, 3)) end
if not existed then
  redis.call('HSET', B, 'created', now_ms(), 'gw', 0, 'seq', 0)
  local made = redis.pcall('XGROUP', 'CREATE', S, GROUP, '$', 'MKSTREAM')
  if type(made) == 'table' and made.err and not string.find(made.err, 'BUSYGROUP') then return redis.error_reply(made.err) end
end
changed(name, 'queue', existed and 'configure' or 'create')
return cjson.encode({created = not existed, settings = redis.call('HGETALL', B)})
