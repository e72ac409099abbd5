-- queue-redrive: moves dead letters back into the queue with their delivery count reset (a group message to the end
-- of its group's line). KEYS[1] the base key; ARGV[1] the name (for its event); ARGV[2] a JSON array of message ids,
-- or empty for the oldest ones; ARGV[3] how many at most. Answers 'missing', or JSON {redriven, ids}.
if redis.call('EXISTS', B) == 0 then return 'missing' end
local ids = ARGV[2] ~= '' and cjson.decode(ARGV[2]) or redis.call('ZRANGE', X, 0, tonumber(ARGV[3]) - 1)
local now = now_ms()
local moved = {}
for _, mid in ipairs(ids) do
  local r = redis.call('ZSCORE', X, mid) and record(mid)
  if r then
    redis.call('ZREM', X, mid)
    r.c, r.f, r.k, r.l = 0, nil, nil, nil
    if r.g then join_group(mid, r, now, now) else make_ready(mid, r) end
    moved[#moved + 1] = mid
  end
end
if #moved > 0 then changed(ARGV[1], 'queue', 'redrive') end
return cjson.encode({redriven = #moved, ids = moved})
