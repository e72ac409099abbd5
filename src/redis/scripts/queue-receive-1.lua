-- queue-receive: delivers up to ARGV[2] messages, each with a lease of ARGV[3] ms (0: the queue's
-- visibility_timeout), to consumer ARGV[4]. KEYS[1] the base key; ARGV[1] the name (for its event). In order: the
-- delayed messages that are due join the stream; leases that ran out are delivered again (XCLAIM), or dead-lettered
-- past max_deliveries; then new entries (XREADGROUP). Answers 'missing', or JSON {messages, due, last}: `due` the
-- earliest moment (ms) a delay or lease ends (0: none), `last` the stream's last entry id, after which a blocking
-- XREAD waits for the next send (src/queues/poller.ts).
local c = settings()
if not c then return 'missing' end
local count = tonumber(ARGV[2])
local now = now_ms()
local lease = tonumber(ARGV[3])
if lease == 0 then lease = tonumber(c.visibility_timeout) end
local max_deliveries = tonumber(c.max_deliveries)
local retention = tonumber(c.retention)
local consumer = ARGV[4]
local changes = false

for _, mid in ipairs(redis.call('ZRANGEBYSCORE', D, '-inf', now, 'LIMIT', 0, 1000)) do
  redis.call('ZREM', D, mid)
  local r = record(mid)
  if r then make_ready(mid, r) end
end

local out = {}
local function deliver(mid, r)
  r.c = r.c + 1
  r.f = r.f or now
  r.l = now + lease
  save(mid, r)
  redis.call('ZADD', L, r.l, mid)
  local v = view(mid, r)
  out[#out + 1] = v
  changes = true
end

-- Older than the retention: dropped (documented in docs/queues.md).
local function stale(mid, r)
  if retention > 0 and now - r.t > retention then
    finish(mid, r, now)
    changes = true
    return true
  end
  return false
end

for _, mid in ipairs(redis.call('ZRANGEBYSCORE', L, '-inf', now, 'LIMIT', 0, count)) do
  local r = record(mid)
  if not r then
    redis.call('ZREM', L, mid)
  elseif not stale(mid, r) then
    if r.c >= max_deliveries then
      kill(mid, r, r.x or ('lease expired after delivery ' .. r.c), now)
      changes = true
    else
      local claimed = r.e and redis.call('XCLAIM', S, GROUP, consumer, 0, r.e, 'JUSTID') or {}
      if #claimed > 0 then
        deliver(mid, r)
      else
        -- Its entry was trimmed away (XTRIM by another client): it goes back into the stream, not lost.
        redis.call('ZREM', L, mid)
        unstream(r)
        make_ready(mid, r)
      end
    end
  end
end

local want = count - #out
if want > 0 then
  local got = redis.call('XREADGROUP', 'GROUP', GROUP, consumer, 'COUNT', want, 'STREAMS', S, '>')
  if got then
    for _, entry in ipairs(got[1][2]) do
      local id, mid = entry[1], entry[2][2]
      local r = record(mid)
      if not r or r.e ~= id then
        -- An entry whose message is gone (acked, purged) or was re-added since.
        redis.call('XACK', S, GROUP, id)
        redis.call('XDEL', S, id)
      elseif not stale(mid, r) then
        deliver(mid, r)
      end
    end
  end
end

local due = 0
for _, z in ipairs({D, L}) do
  local first = redis.call('ZRANGE', z, 0, 0, 'WITHSCORES')
  if first[2] then
    local at = tonumber(first[2])
    if due == 0 or at < due then due = at end
  end
end
local last = redis.call('XREVRANGE', S, '+', '-', 'COUNT', 1)
if changes then changed(ARGV[1], 'queue', 'receive') end
return cjson.encode({messages = out, due = due, last = last[1] and last[1][1] or '0-0', now = now})
