-- queue-configure: creates a queue or changes its settings, in one call. KEYS[1] the queue's base key; ARGV[1] the
-- queue's name (with the key prefix, for its change event); ARGV[2] how many arguments after it are the defaults
-- (setting, value pairs written only when the queue is new); then the settings given (setting, value pairs).
-- Answers {created, settings} as JSON.
local name, defaults = ARGV[1], tonumber(ARGV[2])
local existed = redis.call('EXISTS', B) == 1
if not existed and defaults > 0 then redis.call('HSET', B, unpack(ARGV, 3, 2 + defaults)) end
if #ARGV > 2 + defaults then redis.call('HSET', B, unpack(ARGV, 3 + defaults)) end
if not existed then
  redis.call('HSET', B, 'created', now_ms(), 'gw', 0, 'seq', 0)
  local made = redis.pcall('XGROUP', 'CREATE', S, GROUP, '$', 'MKSTREAM')
  if type(made) == 'table' and made.err and not string.find(made.err, 'BUSYGROUP') then return redis.error_reply(made.err) end
end
changed(name, 'queue', existed and 'configure' or 'create')
return cjson.encode({created = not existed, settings = redis.call('HGETALL', B)})
