-- typed: a type-checked read, write or increment of one key; the library that typed-read-1, typed-write-1,
-- typed-incr-1 and typed-batch-n are each prefixed with (src/redis/client.ts), so that every script runs the same code.

-- The change feed (issue 18, docs/change-feed.md). src/redis/client.ts puts `local FEED = ...` before this library:
-- false when SVC_CHANGES_ENABLED is off (then `changed` returns at once), else {key = the stream, maxlen = the
-- approximate retention, strip = bytes of SVC_KEY_PREFIX}. The event is appended by the script that writes, so that
-- no acknowledged write lacks its event and no event describes a write that did not happen. It holds the key (without
-- the prefix), the family's Redis type and the operation (the write command in lower case: set, hset, hdel, sadd,
-- srem, spop, del, expire, persist, incrby, ...); its time is the stream id's milliseconds; never the value.
-- `changed(key, kind, operation)`, which appends it, comes before this library: src/redis/change-event.ts writes it
-- with the event's fields, which every other writer (the waiting pop, flush, expirations) takes from there too.

-- This library runs on every call of every typed script (EVAL keeps no state between calls), so its top level only
-- defines functions: no tables (each one costs Redis ~0.2 µs to build and collect per call; lookups are if-chains).

-- Whether a write command's reply shows a change: a positive count, OK, a popped element; not 0, nil or {}.
-- `flags` are those typed_write split off the command, `arg` the first argument after them.
local function changes(cmd, flags, arg, reply)
  -- These change the key whenever they succeed, although their reply may be 0 (HSET of existing fields).
  if cmd == 'SET' or cmd == 'HSET' or cmd == 'HMSET' then return true end
  -- ZADD without CH counts only the members added, not a new score of one already there (NX only adds).
  if cmd == 'ZADD' and not flags and arg ~= 'NX' then return true end
  local kind = type(reply)
  if kind == 'number' then return reply > 0 end
  if kind == 'table' then return reply.ok ~= nil or #reply > 0 end
  return kind == 'string'
end

-- Bounded reads (issue 22, docs/security.md "Bounded input and reads"). src/redis/client.ts puts
-- `local BUDGET = {elements = .., bytes = .., unpaged = ..}` before this library: what one script call (one request,
-- or one hash slot's share of a batch) may read into its reply (SVC_MAX_REPLY_ELEMENTS, SVC_MAX_REPLY_BYTES), and
-- how large a hash or set a whole (unpaged) read takes. Sizes are checked before the data is read: a whole read
-- (GET, HGETALL, HKEYS, HVALS, SMEMBERS) costs its key's size (STRLEN; HLEN / SCARD and MEMORY USAGE, which is
-- O(elements) without building anything); every reply is counted after it is read, so that no call goes past them.
local spent_elements, spent_bytes = 0, 0

-- The size command of a whole read (HGETALL, HKEYS, HVALS: HLEN; SMEMBERS: SCARD); nil for any other read.
local function whole_size(cmd)
  if cmd == 'HGETALL' or cmd == 'HKEYS' or cmd == 'HVALS' then return 'HLEN' end
  if cmd == 'SMEMBERS' then return 'SCARD' end
end

local function too_large(elements, bytes)
  return redis.error_reply('REPLY_TOO_LARGE ' .. elements .. ' ' .. bytes)
end

-- MEMORY USAGE of `key`, or nil where the server refuses it (renamed away, or denied by ACL: a managed Redis).
local function memory_usage(key, samples)
  local bytes = redis.pcall('MEMORY', 'USAGE', key, 'SAMPLES', samples)
  if type(bytes) == 'table' then return nil end
  return bytes or 0
end

-- Without MEMORY USAGE: a hash's field and value bytes (HKEYS, then HSTRLEN of each: the count is within the
-- element budget); nil for a set, whose reply is then bounded as it is read (reply_size), never before.
local function value_bytes(key, size)
  if size ~= 'HLEN' then return nil end
  local bytes = 0
  for _, field in ipairs(redis.call('HKEYS', key)) do bytes = bytes + #field + redis.call('HSTRLEN', key, field) end
  return bytes
end

-- What a read (typed_read's argv) of `key` (of the expected type) will put in the reply: elements, bytes. 0, 0 for
-- reads that are small by construction (a field, a score, a page: pages are bounded as they are read).
local function read_estimate(key, argv)
  local cmd = argv[2]
  if cmd == 'WHOLE' then cmd = argv[3] end
  if cmd == 'GET' then return 1, redis.call('STRLEN', key) end
  local size = whole_size(cmd)
  if not size then return 0, 0 end
  local n = redis.call(size, key)
  if cmd == 'HGETALL' then n = 2 * n end
  -- MEMORY USAGE walks every element: only when the count is within the budget (then it is bounded too).
  if n == 0 or n > BUDGET.elements then return n, 0 end
  return n, memory_usage(key, 0) or value_bytes(key, size) or 0
end

-- The elements and bytes of a reply: a string, or an array of strings, numbers or arrays.
local function reply_size(value)
  local kind = type(value)
  if kind == 'string' then return 1, #value end
  if kind == 'number' then return 1, 0 end
  if kind ~= 'table' or value.ok ~= nil or value.err ~= nil then return 0, 0 end
  local elements, bytes = 0, 0
  for _, item in ipairs(value) do
    local e, b = reply_size(item)
    elements, bytes = elements + e, bytes + b
  end
  return elements, bytes
end

-- Adds a reply to what this call has read; false when the budget is exceeded.
local function spend(reply)
  local elements, bytes = reply_size(reply)
  spent_elements, spent_bytes = spent_elements + elements, spent_bytes + bytes
  return spent_elements <= BUDGET.elements and spent_bytes <= BUDGET.bytes
end

-- A page of a hash or set: SCAN-like, from an opaque position (a SCAN cursor and how many of that cursor's
-- elements earlier pages took), at most `limit` elements and BUDGET.bytes. Returns {next cursor, next skip,
-- elements (HSCAN: field, value, ...), the key's size}; the walk is over when the next cursor is '0' and skip '0'. Elements present
-- during the whole walk and not changed come exactly once.
-- argv[3]  HSCAN | SSCAN; argv[4] the SCAN cursor; argv[5] skip; argv[6] limit
local function scan_page(key, argv)
  local cmd, cursor, skip, limit = argv[3], argv[4], tonumber(argv[5]), tonumber(argv[6])
  local stride = cmd == 'HSCAN' and 2 or 1
  local items, bytes, taken, calls, i, n = {}, 0, 0, 0, 0, 0
  repeat
    local reply = redis.call(cmd, key, cursor, 'COUNT', limit - taken)
    local got = reply[2]
    n, i = #got / stride, skip
    while i < n and taken < limit do
      local size = 0
      for j = 1, stride do size = size + #got[i * stride + j] end
      if bytes + size > BUDGET.bytes and taken > 0 then break end
      bytes = bytes + size
      for j = 1, stride do items[#items + 1] = got[i * stride + j] end
      i, taken = i + 1, taken + 1
    end
    -- Stopped inside this SCAN step: the next page starts again at its cursor and skips what was taken.
    if i < n then break end
    cursor, skip, calls = reply[1], 0, calls + 1
  until cursor == '0' or taken >= limit or calls >= 16
  local size = redis.call(stride == 2 and 'HLEN' or 'SCARD', key)
  if i < n then return {cursor, tostring(i), items, size} end
  return {cursor, '0', items, size}
end

-- LRANGE key start stop in slices of 16 items, stopping at the budget: a list page of 1,000 items of 1 MiB would
-- otherwise be built whole before `spend` could refuse it. Returns the items, or an error reply.
local function bounded_lrange(key, start, stop)
  local length = redis.call('LLEN', key)
  start, stop = tonumber(start), tonumber(stop)
  if start < 0 then start = math.max(length + start, 0) end
  if stop < 0 then stop = length + stop end
  stop = math.min(stop, length - 1)
  local items, bytes = {}, 0
  for from = start, stop, 16 do
    for _, item in ipairs(redis.call('LRANGE', key, from, math.min(from + 15, stop))) do
      bytes = bytes + #item
      if spent_bytes + bytes > BUDGET.bytes then return too_large(spent_elements + #items, spent_bytes + bytes) end
      items[#items + 1] = item
    end
  end
  return items
end

-- 'FIELD' field: HGET's value, and the field's own TTL (HTTL: -1 none, -2 no such field). Sent only where the
-- capability probe did not find HTTL refused (ops/hashes.ts): a refusal here is a read built before it answered, and
-- a server without HTTL has no field that expires (-1).
local function field_with_ttl(key, field)
  local ttl = redis.pcall('HTTL', key, 'FIELDS', '1', field)
  return redis.call('HGET', key, field), ttl.err and -1 or ttl[1]
end

-- Checks the type of `key`, then runs one read command on it and reports its TTL.
-- argv[1]  the expected Redis type: string | hash | set | list | zset
-- argv[2]  optional: the read command; argv[3..] its arguments after the key. Three of our own: 'WHOLE' then
--          HGETALL / HKEYS / HVALS / SMEMBERS (a whole hash or set, refused above BUDGET.unpaged elements),
--          'PAGE' (scan_page) and 'FIELD' (field_with_ttl). LRANGE is read in slices (bounded_lrange).
-- Returns nil when the key does not exist, else {reply of the command (nil without one), TTL, and for 'FIELD' the
-- field's TTL (beside the reply, which the budget counts: neither TTL is)};
-- fails with "WRONGTYPE_OF <actual type>" when the key holds another type, "PAGE_REQUIRED <size>" when a whole
-- read is too large, "REPLY_TOO_LARGE <elements> <bytes>" when the read would go past the call's budget.
local function typed_read(key, argv)
  local actual = redis.call('TYPE', key)['ok']
  if actual == 'none' then return nil end
  if actual ~= argv[1] then return redis.error_reply('WRONGTYPE_OF ' .. actual) end
  local reply, field_ttl = false, nil
  if #argv > 1 then
    local cmd, from = argv[2], 3
    if cmd == 'WHOLE' then
      local n = redis.call(whole_size(argv[3]), key)
      if n > BUDGET.unpaged then return redis.error_reply('PAGE_REQUIRED ' .. n) end
      cmd, from = argv[3], 4
    end
    local elements, bytes = read_estimate(key, argv)
    if spent_elements + elements > BUDGET.elements or spent_bytes + bytes > BUDGET.bytes then
      return too_large(spent_elements + elements, spent_bytes + bytes)
    end
    if cmd == 'PAGE' then
      reply = scan_page(key, argv)
    elseif cmd == 'LRANGE' then
      reply = bounded_lrange(key, argv[3], argv[4])
      if reply.err then return reply end
    elseif cmd == 'FIELD' then
      reply, field_ttl = field_with_ttl(key, argv[3])
    else
      reply = redis.call(cmd, key, unpack(argv, from))
    end
    if not spend(reply) then return too_large(spent_elements, spent_bytes) end
  end
  return {reply, redis.call('TTL', key), field_ttl}
end

-- Runs `cmd key [flags...] argv[from..to]` with `call` (redis.call, or redis.pcall to get an error as a reply);
-- flags (nil when none) are repeated by every chunk of a long write.
local function call_range(call, cmd, key, flags, argv, from, to)
  if not flags then return call(cmd, key, unpack(argv, from, to)) end
  local args = {unpack(flags)}
  for j = from, to do args[#args + 1] = argv[j] end
  return call(cmd, key, unpack(args))
end

-- One write to `key` of a given type, with its conditions and TTL rule, atomically.
-- argv[1]  the expected Redis type: string | hash | set | list | zset (a missing key is always accepted)
-- argv[2]  condition: '' none | 'absent' fail with KEY_EXISTS if the key exists | 'present' return nil if it does not
-- argv[3]  '1' to drop the old content first (replace), '0' to merge into it
-- argv[4]  TTL in seconds to set after the write, or '' to leave the expiry as the write leaves it; 'F<seconds>' sets
--          instead the TTL of the field argv[8] (HEXPIRE, Redis 8 / Valkey 9), refused with NO_FIELD_TTL before anything
--          is written on a server without it; not after an HSETNX that wrote nothing
-- argv[5]  count command run after the write ('HLEN', 'SCARD', 'LLEN', 'ZCARD') or ''
-- argv[6]  stride: arguments per item of a variadic command (2 for HSET, 1 for SADD, RPUSH), '0' to send them at once;
--          long argument lists are sent in chunks (Lua's unpack has a small limit) and integer replies summed
-- argv[7]  the write command, optionally followed by flags that every chunk repeats, space-separated
--          ('ZADD NX CH'); argv[8..] its arguments after the key (and the flags)
-- Returns {1 if the key existed before else 0, reply of the command, count or 0}; fails with the command's own
-- error when Redis refuses it (LSET beyond the end of a list), and then nothing was written.
local function typed_write(key, argv)
  local actual = redis.call('TYPE', key)['ok']
  local existed = actual ~= 'none'
  if existed and actual ~= argv[1] then return redis.error_reply('WRONGTYPE_OF ' .. actual) end
  if argv[2] == 'absent' and existed then return redis.error_reply('KEY_EXISTS the key exists') end
  if argv[2] == 'present' and not existed then return nil end
  local field_ttl = string.sub(argv[4], 1, 1) == 'F' and string.sub(argv[4], 2) or nil
  -- The capability probe refuses a field TTL before anything is sent (ops/hashes.ts); this check is for a write
  -- built before the first probe answered.
  if field_ttl then
    local probe = redis.pcall('HTTL', key, 'FIELDS', '1', argv[8])
    if type(probe) == 'table' and probe.err then return redis.error_reply('NO_FIELD_TTL ' .. probe.err) end
  end
  if argv[3] == '1' and existed then redis.call('DEL', key) end

  local stride, cmd, first = tonumber(argv[6]), argv[7], 8
  local flags = nil
  if string.find(cmd, ' ', 1, true) then
    flags = {}
    for word in string.gmatch(cmd, '%S+') do flags[#flags + 1] = word end
    cmd = table.remove(flags, 1)
  end
  local reply
  if stride == 0 or #argv - first + 1 <= 1000 * stride then
    reply = call_range(redis.pcall, cmd, key, flags, argv, first, #argv)
    if type(reply) == 'table' and reply.err then return reply end
  else
    reply = 0
    local chunk = 1000 * stride
    for i = first, #argv, chunk do
      reply = reply + call_range(redis.call, cmd, key, flags, argv, i, math.min(i + chunk - 1, #argv))
    end
  end

  local expired = argv[4] ~= '' and not field_ttl and redis.call('EXISTS', key) == 1
  if expired then redis.call('EXPIRE', key, argv[4]) end
  if field_ttl and (cmd ~= 'HSETNX' or reply == 1) then
    redis.call('HEXPIRE', key, field_ttl, 'FIELDS', '1', argv[first])
    expired = true
  end
  -- One event per write that changed something (the old content dropped, the command, the TTL).
  if FEED and ((argv[3] == '1' and existed) or expired or changes(cmd, flags, argv[first], reply)) then
    changed(key, argv[1], string.lower(cmd))
  end
  local count = 0
  if argv[5] ~= '' then count = redis.call(argv[5], key) end
  return {existed and 1 or 0, reply, count}
end

-- Whether an error of INCRBY and co. is Redis's message for a stored value that is not a number of the kind asked,
-- or for a result out of range.
local function number_error(err)
  local texts = {
    'not an integer', 'not a valid float', 'not a float', 'overflow', 'NaN or Infinity', 'not a number (NaN)',
  }
  for _, text in ipairs(texts) do
    if string.find(err, text, 1, true) then return true end
  end
  return false
end

-- One increment of a number in `key` (a string, a field of a hash, the score of a sorted set's member), answering
-- the new value exactly.
-- argv[1]  the expected Redis type: string | hash | zset (a missing key is always accepted)
-- argv[2]  TTL in seconds to set only when this call creates the key, or '' (an existing expiry is kept)
-- argv[3]  INCRBY | INCRBYFLOAT | HINCRBY | HINCRBYFLOAT | ZINCRBY; argv[4..] its arguments after the key
-- Returns {1 if the key existed before else 0, 1 if the field or member (for a string: the key) existed, the new
-- value as Redis stores it (a decimal string), TTL}; fails with "NOT_A_NUMBER <Redis's message>" when the stored
-- value is not a number of that kind or the result is out of range (or NaN), and then nothing is written.
local function typed_incr(key, argv)
  local actual = redis.call('TYPE', key)['ok']
  local existed = actual ~= 'none'
  if existed and actual ~= argv[1] then return redis.error_reply('WRONGTYPE_OF ' .. actual) end
  local hash = argv[1] == 'hash'
  local had = existed
  if hash and existed then had = redis.call('HEXISTS', key, argv[4]) == 1 end
  -- ZINCRBY key increment member
  if argv[1] == 'zset' and existed then had = redis.call('ZSCORE', key, argv[5]) ~= false end
  local reply = redis.pcall(argv[3], key, unpack(argv, 4))
  if type(reply) == 'table' and reply.err then
    if number_error(reply.err) then return redis.error_reply('NOT_A_NUMBER ' .. reply.err) end
    return reply
  end
  -- Lua numbers are doubles: an integer reply beyond 2^53 would lose digits, the stored string does not.
  if type(reply) == 'number' then
    if hash then reply = redis.call('HGET', key, argv[4]) else reply = redis.call('GET', key) end
  end
  if argv[2] ~= '' and not existed then redis.call('EXPIRE', key, argv[2]) end
  -- An increment by 0 of an existing number changes nothing: no event. ZINCRBY takes the increment before the member.
  local by = argv[1] == 'zset' and argv[4] or argv[#argv]
  if FEED and (not had or tonumber(by) ~= 0) then changed(key, argv[1], string.lower(argv[3])) end
  return {existed and 1 or 0, had and 1 or 0, reply, redis.call('TTL', key)}
end

-- ETags (issue 17): conditional requests, checked in the same script call as the operation they guard. --------
-- Kept apart from the functions above, which they wrap: an operation that asks for no ETag never runs this code.

-- The key's strong ETag (a SHA-1 of its content, without quotes), or nil when the key does not exist. No storage,
-- and the content only (issue 28): never the encoding, the hash table's order (DUMP's, which rehashing changes on
-- reads), a restart or a replica. A string's digest is that of its value (`value` when the caller has just read
-- it); a list's of its elements in order and a sorted set's of its members in order with their scores, as JSON
-- (cjson: an unambiguous encoding, in C); a hash's of its field/value pairs and a set's of its members, each pair
-- or member digested on its own and the digests sorted: hex digits sort the same in every collation (Redis sets
-- LC_COLLATE from its environment, and Lua's `<` follows it), raw fields might not. Costs in docs/performance.md.
-- Another type (not served, e.g. a stream under DELETE /store/keys) falls back to DUMP.
local function sorted_digests(kind, digests)
  table.sort(digests)
  return redis.sha1hex(kind .. ':' .. table.concat(digests))
end
local function etag_of(key, actual, value)
  if actual == 'none' then return nil end
  if actual == 'string' then return redis.sha1hex(value or redis.call('GET', key)) end
  if actual == 'list' then return redis.sha1hex('list:' .. cjson.encode(redis.call('LRANGE', key, 0, -1))) end
  if actual == 'zset' then
    return redis.sha1hex('zset:' .. cjson.encode(redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')))
  end
  if actual == 'hash' then
    local pairs, digests = redis.call('HGETALL', key), {}
    -- The field's length first: no two pairs share a text.
    for i = 1, #pairs, 2 do digests[#digests + 1] = redis.sha1hex(#pairs[i] .. ':' .. pairs[i] .. pairs[i + 1]) end
    return sorted_digests('hash', digests)
  end
  if actual == 'set' then
    local members = redis.call('SMEMBERS', key)
    for i = 1, #members do members[i] = redis.sha1hex(members[i]) end
    return sorted_digests('set', members)
  end
  return redis.sha1hex(redis.call('DUMP', key))
end

-- Whether `key`, holding type `actual` (its type `expected` or none), satisfies `match`: '*' it exists; else
-- '=' followed by the strong entity-tags the If-Match header lists, each quoted. Returns ok, the current ETag.
local function etag_matches(key, actual, match)
  local current = etag_of(key, actual)
  if match == '*' then return current ~= nil, current end
  return current ~= nil and string.find(match, '"' .. current .. '"', 2, true) ~= nil, current
end

-- 'd': DEL of a key of any type (expected type '*'), for DELETE /store/keys/{key}, with its change event.
local function delete_any(key)
  local kind = redis.call('TYPE', key)['ok']
  local deleted = redis.call('DEL', key)
  if FEED and deleted == 1 then changed(key, kind, 'del') end
  return deleted
end
-- typed_etag's operation by its kind: 'r', 'w', 'i' or 'd'.
local function etag_run(kind)
  if kind == 'r' then return typed_read end
  if kind == 'w' then return typed_write end
  if kind == 'i' then return typed_incr end
  return delete_any
end

-- Answering an ETag the client did not ask for is bounded: its digest reads the whole key. A page read of a list
-- or sorted set (answer '2'), or of a page of a hash or set, answers it up to ETAG_MAX_ELEMENTS elements; an unconditional write (answer '3') up
-- to ETAG_MAX_ELEMENTS elements of any collection or ETAG_MAX_BYTES of a string. The client can ask (answer '1').
-- 128 is Redis's default compact-encoding size for sorted sets: a 1,000-member leaderboard's top-10 read with the
-- digest answered 4,579 req/s, without it 6,978 (npm run bench -- --quick --only=leaderboard).
local ETAG_MAX_ELEMENTS = 128
local ETAG_MAX_BYTES = 16384
local function etag_bounded(key, actual, answer, paged)
  -- A whole hash or set read is itself bounded (BUDGET.unpaged, the reply budget); its pages are not.
  if answer == '2' and actual ~= 'list' and actual ~= 'zset' and not paged then return true end
  if actual == 'string' then return redis.call('STRLEN', key) <= ETAG_MAX_BYTES end
  local size = (actual == 'list' and 'LLEN') or (actual == 'zset' and 'ZCARD') or (actual == 'hash' and 'HLEN')
    or (actual == 'set' and 'SCARD')
  if not size then return true end
  return redis.call(size, key) <= ETAG_MAX_ELEMENTS
end

-- Runs typed_read ('r'), typed_write ('w'), typed_incr ('i') or a DEL ('d') under an If-Match precondition,
-- answering the ETag.
-- argv[1]  which of the three, then '1' to answer the key's ETag after the operation, '2' or '3' to answer it
--          when cheap (see etag_bounded), or '0' not, then the
--          precondition: '' none, '*' or '=' + entity-tags (see etag_matches); e.g. 'r1', 'w1="3a..","b7.."'.
--          One argument rather than three: the client's cost grows with the number of arguments.
-- argv[2..] the operation's own arguments (argv[2] is the expected type; '*' any, for 'd')
-- Returns {the operation's reply (nil as false), ETag after it or false}; fails like the operation, or with
-- "PRECONDITION_FAILED <current ETag, or - when the key does not exist>" and then nothing is done. A key of
-- another type fails as the operation would (wrong_type), whatever the precondition.
local function typed_etag(key, argv)
  local kind, answer, match = string.sub(argv[1], 1, 1), string.sub(argv[1], 2, 2), string.sub(argv[1], 3)
  local run = etag_run(kind)
  local inner = {}
  for i = 2, #argv do inner[i - 1] = argv[i] end
  local expected = inner[1]
  local actual = redis.call('TYPE', key)['ok']
  local typed = actual == expected or actual == 'none' or expected == '*'
  if match ~= '' and typed then
    local ok, current = etag_matches(key, actual, match)
    if not ok then return redis.error_reply('PRECONDITION_FAILED ' .. (current or '-')) end
  end
  local reply = run(key, inner)
  if type(reply) == 'table' and reply.err then return reply end
  local tag = false
  if answer ~= '0' and typed then
    -- A read changes nothing (and a whole-string read has the value in hand: no second GET).
    local value, now = nil, actual
    if kind ~= 'r' then now = redis.call('TYPE', key)['ok'] end
    if kind == 'r' and expected == 'string' and inner[2] == 'GET' and reply then value = reply[1] end
    if answer == '1' or etag_bounded(key, now, answer, inner[2] == 'PAGE') then tag = etag_of(key, now, value) or false end
  end
  if reply == nil then reply = false end
  return {reply, tag}
end
