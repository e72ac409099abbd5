-- queue: the library every queue-*-1.lua script is prefixed with (src/redis/queue-scripts.ts). KEYS[1] is the queue's
-- base key `#svc:q:{<prefix><name>}` (redis/keys.ts), a hash holding its settings; every other key of the queue is
-- that name plus a suffix, so all of them share its hash slot (the `{...}` tag). Messages are records in a hash (id ->
-- JSON); the stream and its consumer group `q` hold the ready and in-flight ones, a sorted set the delayed ones (score:
-- when due), another the leases (score: when the lease ends), another the dead letters (score: when they died).
local B = KEYS[1]
local S, M, D, L, X = B .. ':s', B .. ':m', B .. ':d', B .. ':l', B .. ':x'
local U, UH, G = B .. ':u', B .. ':uh', B .. ':G'
local GROUP = 'q'

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The settings hash as a table, or nil when the queue does not exist.
local function settings()
  local flat = redis.call('HGETALL', B)
  if #flat == 0 then return nil end
  local c = {}
  for i = 1, #flat, 2 do c[flat[i]] = flat[i + 1] end
  return c
end

local function record(mid)
  local r = redis.call('HGET', M, mid)
  if not r then return nil end
  return cjson.decode(r)
end

local function save(mid, r) redis.call('HSET', M, mid, cjson.encode(r)) end

local function group_key(g) return B .. ':g:' .. g end

-- Deliverable now: an entry at the stream's end (its id kept in the record, to acknowledge it later).
local function make_ready(mid, r)
  r.e = redis.call('XADD', S, '*', 'm', mid)
  save(mid, r)
end

local function schedule(mid, r, at, now)
  if at > now then
    r.e = false
    save(mid, r)
    redis.call('ZADD', D, at, mid)
  else
    make_ready(mid, r)
  end
end

-- Out of the stream and its group's pending list (XACKDEL on Redis 8.2+ does both; XACK + XDEL works everywhere).
local function unstream(r)
  if r.e then
    redis.call('XACK', S, GROUP, r.e)
    redis.call('XDEL', S, r.e)
    r.e = false
  end
end

-- A group's head left it (acked, dead, expired): the next message of the group becomes deliverable.
local function release_group(r, now)
  if not r.g then return end
  local key = group_key(r.g)
  redis.call('LPOP', key)
  local nxt = redis.call('LINDEX', key, 0)
  if nxt then
    redis.call('HINCRBY', B, 'gw', -1)
    local n = record(nxt)
    if n then schedule(nxt, n, n.nb or 0, now) end
  else
    redis.call('SREM', G, r.g)
  end
end

-- A group message joins its group's line: the first of the line is delivered, the others wait behind it.
local function join_group(mid, r, at, now)
  local key = group_key(r.g)
  if redis.call('RPUSH', key, mid) == 1 then
    redis.call('SADD', G, r.g)
    schedule(mid, r, at, now)
  else
    redis.call('HINCRBY', B, 'gw', 1)
    r.nb = at
    r.e = false
    save(mid, r)
  end
end

local function finish(mid, r, now)
  unstream(r)
  redis.call('ZREM', L, mid)
  redis.call('HDEL', M, mid)
  release_group(r, now)
end

-- Into the dead letters with its last error, in the same step as it leaves the live queue.
local function kill(mid, r, err, now)
  unstream(r)
  redis.call('ZREM', L, mid)
  redis.call('ZREM', D, mid)
  r.x = err
  r.k = now
  r.l = nil
  save(mid, r)
  redis.call('ZADD', X, now, mid)
  release_group(r, now)
end

-- A message as the API shows it (without a receipt).
local function view(mid, r)
  return {id = mid, body = r.b, encoding = r.n, attributes = r.a, group = r.g or cjson.null, sent_at = r.t,
    delivery_count = r.c, first_delivered_at = r.f or cjson.null, last_error = r.x or cjson.null,
    dead_at = r.k or cjson.null, lease_expires_at = r.l or cjson.null}
end
