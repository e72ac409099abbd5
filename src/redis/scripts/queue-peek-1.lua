-- queue-peek: reads messages without changing anything. KEYS[1] the base key; ARGV[1] 'ready', 'delayed', 'in_flight'
-- or 'dead'; ARGV[2] how many at most. Answers 'missing', or a JSON array of messages, oldest first.
if redis.call('EXISTS', B) == 0 then return 'missing' end
local what, count = ARGV[1], tonumber(ARGV[2])
local mids = {}
if what == 'ready' then
  -- The entries after the group's last delivered one: those not delivered yet.
  local last = '0-0'
  for _, g in ipairs(redis.call('XINFO', 'GROUPS', S)) do
    for i = 1, #g, 2 do if g[i] == 'last-delivered-id' then last = g[i + 1] end end
  end
  for _, e in ipairs(redis.call('XRANGE', S, '(' .. last, '+', 'COUNT', count)) do mids[#mids + 1] = e[2][2] end
else
  local z = ({delayed = D, in_flight = L, dead = X})[what]
  mids = redis.call('ZRANGE', z, 0, count - 1)
end
local out = {}
for _, mid in ipairs(mids) do
  local r = record(mid)
  if r then out[#out + 1] = view(mid, r) end
end
return cjson.encode(out)
