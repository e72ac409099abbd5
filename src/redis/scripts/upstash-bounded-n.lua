-- upstash-bounded-n: an /upstash read whose reply size depends on the data, checked against the reply budget
-- (SVC_MAX_REPLY_ELEMENTS / _BYTES, the BUDGET header of src/redis/client.ts) before Redis builds the reply, and run
-- in the same atomic call (docs/upstash.md "Reply size"). Sizes come from counts (HLEN, SCARD, LLEN, ZCARD, XLEN,
-- STRLEN, DBSIZE) and MEMORY USAGE, never from reading the data.
-- KEYS     the command's keys (prefixed, as in the command)
-- ARGV[1]  the kind: strings | getrange | hash | set | sets | zsets | list | zrange | stream | keys
-- ARGV[2]  'run' (check, then run the command) or 'size' (answer {elements, bytes}: a pipeline adds them up)
-- ARGV[3..] the command as Redis receives it
-- The command is read in place (cmd(i) = its i-th word): Lua's unpack takes at most ~8,000 values, so a command
-- with more arguments is only sized here ('size') and then sent as it is (src/upstash/bounds.ts SCRIPT_MAX_ARGS).
local kind, mode = ARGV[1], ARGV[2]
local function cmd(i) return ARGV[i + 2] end
local words = #ARGV - 2

-- A count that is an error (a key of another type: the command itself answers WRONGTYPE) counts 0.
local function count(name, key)
  local n = redis.pcall(name, key)
  if type(n) ~= 'number' then return 0 end
  return n
end

-- The bytes of `n` of the `total` elements of `key`: MEMORY USAGE (exact, O(elements)) when the whole key is read
-- and within the element budget, else its sampled estimate (cheap) in proportion.
-- Where the server refuses MEMORY USAGE (a managed Redis), `unsized` is set: the reply is then measured once
-- built, before it is answered (a read changes nothing, so dropping it is safe).
local unsized = false
local function memory_usage(key, ...)
  local bytes = redis.pcall('MEMORY', 'USAGE', key, ...)
  if type(bytes) == 'table' then
    unsized = true
    return 0
  end
  return bytes or 0
end

local function bytes_of(key, n, total)
  if n <= 0 or total <= 0 then return 0 end
  if n == total and n <= BUDGET.elements then return memory_usage(key, 'SAMPLES', 0) end
  return math.ceil(memory_usage(key) * n / total)
end

-- The bytes of the strings in a reply (arrays walked), for the check after the fact.
local function reply_bytes(value)
  if type(value) == 'string' then return #value end
  if type(value) ~= 'table' or value.err then return 0 end
  local bytes = 0
  for _, item in ipairs(value) do bytes = bytes + reply_bytes(item) end
  return bytes
end

-- How many elements of `length` the inclusive range start..stop covers (Redis's rules for negative indexes).
local function range_count(length, start, stop)
  start, stop = tonumber(start), tonumber(stop)
  if not start or not stop then return 0 end
  if start < 0 then start = math.max(length + start, 0) end
  if stop < 0 then stop = length + stop end
  stop = math.min(stop, length - 1)
  if start > stop then return 0 end
  return stop - start + 1
end

local function has_word(word, from)
  for i = from, words do
    if string.upper(cmd(i)) == word then return i end
  end
  return nil
end

-- LIMIT offset count / COUNT n: at most that many (a negative LIMIT count means all).
local function capped(n, at, offset)
  if not at then return n end
  local limit = tonumber(cmd(at + offset))
  if not limit or limit < 0 then return n end
  return math.min(n, limit)
end

local function estimate()
  local key = KEYS[1]
  if kind == 'strings' then
    local total = 0
    for _, k in ipairs(KEYS) do total = total + count('STRLEN', k) end
    return #KEYS, total
  elseif kind == 'getrange' then
    return 1, range_count(count('STRLEN', key), cmd(3), cmd(4))
  elseif kind == 'hash' then
    local n = count('HLEN', key)
    local elements = string.upper(cmd(1)) == 'HGETALL' and 2 * n or n
    return elements, bytes_of(key, n, n)
  elseif kind == 'set' then
    local n = count('SCARD', key)
    return n, bytes_of(key, n, n)
  elseif kind == 'sets' or kind == 'zsets' then
    local elements, total = 0, 0
    for _, k in ipairs(KEYS) do
      local n = count(kind == 'sets' and 'SCARD' or 'ZCARD', k)
      elements = elements + n
      if elements <= BUDGET.elements then total = total + bytes_of(k, n, n) end
    end
    if kind == 'zsets' and has_word('WITHSCORES', 3) then elements = 2 * elements end
    return elements, total
  elseif kind == 'list' then
    local length = count('LLEN', key)
    local n = range_count(length, cmd(3), cmd(4))
    return n, bytes_of(key, n, length)
  elseif kind == 'zrange' then
    local length = count('ZCARD', key)
    local name = string.upper(cmd(1))
    local by_rank = (name == 'ZRANGE' or name == 'ZREVRANGE')
      and not has_word('BYSCORE', 5) and not has_word('BYLEX', 5)
    local n = by_rank and range_count(length, cmd(3), cmd(4)) or capped(length, has_word('LIMIT', 5), 2)
    local elements = has_word('WITHSCORES', 5) and 2 * n or n
    return elements, bytes_of(key, n, length)
  elseif kind == 'stream' then
    local length = count('XLEN', key)
    local n = capped(length, has_word('COUNT', 5), 1)
    return n, bytes_of(key, n, length)
  elseif kind == 'keys' then
    return redis.call('DBSIZE'), 0
  end
  return 0, 0
end

local elements, bytes = estimate()
if mode == 'size' then return {elements, bytes} end
if elements > BUDGET.elements or bytes > BUDGET.bytes then
  return redis.error_reply('REPLY_TOO_LARGE ' .. elements .. ' ' .. bytes)
end
-- pcall: a Redis error (WRONGTYPE, a syntax error) is answered as the command's own, with Redis's text.
local reply = redis.pcall(unpack(ARGV, 3))
if unsized then
  local measured = reply_bytes(reply)
  if measured > BUDGET.bytes then return redis.error_reply('REPLY_TOO_LARGE ' .. elements .. ' ' .. measured) end
end
return reply
