-- queue-send: adds messages, all or none. KEYS[1] the base key; ARGV[1] the name (for its event); ARGV[2] a JSON array
-- of {b body, n encoding, a attributes, g group|nil, u dedup id|nil, delay ms|nil, at not-before ms|nil}. Answers
-- 'missing', 'too_late <index>' (a delay past the queue's max_delay: nothing added), or JSON [{id, duplicate}].
local c = settings()
if not c then return 'missing' end
local items = cjson.decode(ARGV[2])
local now = now_ms()
local max_delay = tonumber(c.max_delay)
local window = tonumber(c.dedup_window)
local due = {}
for i, m in ipairs(items) do
  local at = m.at or (now + (m.delay or 0))
  if at - now > max_delay then return 'too_late ' .. (i - 1) end
  due[i] = at
end
-- Dedup ids whose window has passed are forgotten first.
for _, old in ipairs(redis.call('ZRANGEBYSCORE', U, '-inf', now, 'LIMIT', 0, 1000)) do
  redis.call('HDEL', UH, old)
  redis.call('ZREM', U, old)
end
local out = {}
for i, m in ipairs(items) do
  local known = m.u and redis.call('HGET', UH, m.u)
  if known then
    out[i] = {id = known, duplicate = true}
  else
    local mid = tostring(redis.call('HINCRBY', B, 'seq', 1))
    local r = {b = m.b, n = m.n, a = m.a, g = m.g, t = now, c = 0, e = false}
    if m.g then join_group(mid, r, due[i], now) else schedule(mid, r, due[i], now) end
    if m.u then
      redis.call('HSET', UH, m.u, mid)
      redis.call('ZADD', U, now + window, m.u)
    end
    out[i] = {id = mid, duplicate = false}
  end
end
changed(ARGV[1], 'queue', 'send')
return cjson.encode(out)
