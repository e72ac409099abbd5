-- queue-stats: the queue's settings and counts. KEYS[1] the base key. Answers 'missing', or JSON {settings, ready,
-- in_flight, delayed, waiting, dead, oldest_ready_at, now}: `waiting` the group messages behind their group's head.
local c = settings()
if not c then return 'missing' end
local pending = redis.call('XPENDING', S, GROUP)[1]
local oldest = cjson.null
local last = '0-0'
for _, g in ipairs(redis.call('XINFO', 'GROUPS', S)) do
  for i = 1, #g, 2 do if g[i] == 'last-delivered-id' then last = g[i + 1] end end
end
local first = redis.call('XRANGE', S, '(' .. last, '+', 'COUNT', 1)[1]
if first then
  local r = record(first[2][2])
  oldest = r and r.t or tonumber(string.match(first[1], '^(%d+)'))
end
return cjson.encode({settings = redis.call('HGETALL', B), ready = redis.call('XLEN', S) - pending,
  in_flight = redis.call('ZCARD', L), delayed = redis.call('ZCARD', D), waiting = tonumber(c.gw),
  dead = redis.call('ZCARD', X), oldest_ready_at = oldest, now = now_ms()})
