-- queue-settle: acks, nacks or extends deliveries by their receipts. KEYS[1] the base key; ARGV[1] the name (for its
-- event); ARGV[2] 'ack', 'nack' or 'extend'; ARGV[3] a JSON array of {m message id, c delivery count, d delay or
-- extension ms (-1: the queue's backoff), x error, j a random fraction for the backoff's jitter}. A receipt holds
-- when its message is in flight (leased, its lease possibly run out but not delivered again) at that delivery.
-- Answers 'missing', or a JSON array of per-item results: {status, lease_expires_at?, retry_at?}.
local c = settings()
if not c then return 'missing' end
local mode = ARGV[2]
local items = cjson.decode(ARGV[3])
local now = now_ms()
local max_deliveries = tonumber(c.max_deliveries)
local backoff = cjson.decode(c.backoff)

-- The delay before the n-th retry, by the queue's backoff.
local function backoff_ms(n, j)
  if backoff.type == 'fixed' then return backoff.delay end
  if backoff.type == 'schedule' then return backoff.delays[math.min(n, #backoff.delays)] end
  local d = math.min(backoff.cap, backoff.base * 2 ^ (n - 1))
  if backoff.jitter then d = d * j end
  return math.floor(d)
end

local out = {}
local changes = false
for i, it in ipairs(items) do
  local mid = it.m
  local r = record(mid)
  if not r or r.k then
    out[i] = {status = r and 'stale' or 'unknown'}
  elseif r.c ~= it.c or not redis.call('ZSCORE', L, mid) then
    out[i] = {status = 'stale'}
  elseif mode == 'ack' then
    finish(mid, r, now)
    out[i] = {status = 'acked'}
  elseif mode == 'extend' then
    r.l = now + it.d
    save(mid, r)
    redis.call('ZADD', L, r.l, mid)
    out[i] = {status = 'extended', lease_expires_at = r.l}
  else
    if it.x then r.x = it.x end
    if r.c >= max_deliveries then
      kill(mid, r, r.x or ('nacked at delivery ' .. r.c), now)
      out[i] = {status = 'dead'}
    else
      local delay = it.d
      if delay < 0 then delay = backoff_ms(r.c, it.j) end
      unstream(r)
      redis.call('ZREM', L, mid)
      r.l = nil
      schedule(mid, r, now + delay, now)
      out[i] = {status = 'retrying', retry_at = now + delay}
    end
  end
  if out[i].status ~= 'stale' and out[i].status ~= 'unknown' then changes = true end
end
if changes then changed(ARGV[1], 'queue', mode) end
return cjson.encode(out)
