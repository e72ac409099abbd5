-- string-sets-n: a batch of plain string sets (no condition, TTL or If-Match: src/engine/run.ts stringSetsOf), each
-- one `SET key value GET`, atomically: what typed-batch-n's typed_write does for them, without its per-operation
-- TYPE, argument tables and reply tables (issue 36: a batch near the floor of bench/baseline-node.ts).
-- KEYS[i]  the key of set i; ARGV[i] its value
-- Returns per set 1 if the key existed before else 0, or "WRONGTYPE_OF <actual type>" for a key of another type
-- (Redis refused that SET: nothing written for it), as its typed_write would.
local out = {}
for i = 1, #KEYS do
  local old = redis.pcall('SET', KEYS[i], ARGV[i], 'GET')
  if type(old) == 'table' and old.err then
    local actual = redis.call('TYPE', KEYS[i])['ok']
    if actual ~= 'string' and actual ~= 'none' then out[i] = redis.error_reply('WRONGTYPE_OF ' .. actual) else out[i] = old end
  else
    out[i] = old and 1 or 0
    if FEED then changed(KEYS[i], 'string', 'set') end
  end
end
return out
