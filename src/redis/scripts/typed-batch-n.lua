-- typed-batch-n: many typed reads and writes (typed.lua) in one call, as atomic as MULTI ... EXEC around
-- typed-read-1, typed-write-1 and typed-incr-1 calls, without a command (and its reply) per operation.
-- KEYS[i]  the key of operation i
-- ARGV[1]  a JSON array of two entries per operation, in order: its kind, 'r' (typed_read), 'w' (typed_write) or
--          'i' (typed_incr), then the array of its arguments, all strings (as ARGV would carry them), which the
--          function takes as it is. One argument instead of two or more per operation keeps the command small for
--          the client, which handles each argument on its own. 'e' is typed_etag (an operation under If-Match),
--          whose own first argument names the operation it wraps.
-- ARGV[2]  optional: 'all' checks every 'e' operation's precondition against the keys as they are before the
--          batch, and runs nothing unless all hold (then fails with "PRECONDITION_FAILED <i> <current ETag or ->",
--          i the first failing operation); the operations then run without checking again.
-- ARGV[3..] optional: arguments of bytes (a value given in base64), which the JSON names by their ARGV index; then
--          ARGV[2] is '' when not 'all'.
-- Fails whole, before anything runs, with "REPLY_TOO_LARGE <elements> <bytes>" when its reads would go past the
-- reply budget (typed.lua).
-- Returns one reply per operation, in order: what its own script returns (nil as nil), or its error. An
-- error fails that operation only, as in a MULTI.
local ops = cjson.decode(ARGV[1])
local RUN = {r = typed_read, w = typed_write, i = typed_incr, e = typed_etag}
-- A number stands for an argument of bytes that JSON cannot carry: ARGV[that number] (see ARGV[3..]).
if #ARGV > 2 then
  for i = 2, #ops, 2 do
    local argv = ops[i]
    for j = 1, #argv do
      if type(argv[j]) == 'number' then argv[j] = ARGV[argv[j]] end
    end
  end
end
if ARGV[2] == 'all' then
  for i = 1, #KEYS do
    local argv = ops[2 * i]
    -- 'e', {kind .. answer .. precondition, type, ...}: see typed_etag.
    local match = ops[2 * i - 1] == 'e' and string.sub(argv[1], 3) or ''
    if match ~= '' then
      local actual = redis.call('TYPE', KEYS[i])['ok']
      -- A key of another type fails its own operation (wrong_type), as in the default mode.
      if actual == argv[2] or actual == 'none' then
        local ok, current = etag_matches(KEYS[i], actual, match)
        if not ok then return redis.error_reply('PRECONDITION_FAILED ' .. i .. ' ' .. (current or '-')) end
      end
      argv[1] = string.sub(argv[1], 1, 2)
    end
  end
end
-- Before anything runs: the reads of the whole batch must fit in the reply budget (typed.lua's read_estimate), or the
-- batch is refused whole with "REPLY_TOO_LARGE <elements> <bytes>" (a thousand reads of one large key, say).
local elements, bytes = 0, 0
for i = 1, #KEYS do
  local kind, argv = ops[2 * i - 1], ops[2 * i]
  -- typed_read's arguments, or those of the read that typed_etag wraps (after its own first one).
  local read = kind == 'r' and argv or (kind == 'e' and string.sub(argv[1], 1, 1) == 'r' and {unpack(argv, 2)})
  if read and redis.call('TYPE', KEYS[i])['ok'] == read[1] then
    local e, b = read_estimate(KEYS[i], read)
    elements, bytes = elements + e, bytes + b
    if elements > BUDGET.elements or bytes > BUDGET.bytes then return too_large(elements, bytes) end
  end
end
local replies = {}
for i = 1, #KEYS do
  local ok, reply = pcall(RUN[ops[2 * i - 1]], KEYS[i], ops[2 * i])
  if not ok and type(reply) ~= 'table' then reply = redis.error_reply(tostring(reply)) end
  -- A nil would end the reply array: false becomes a nil reply in its place.
  if reply == nil then reply = false end
  replies[i] = reply
end
return replies
