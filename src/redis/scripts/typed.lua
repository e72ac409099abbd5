-- typed: a type-checked read, write or increment of one key; the library that typed-read-1, typed-write-1,
-- typed-incr-1 and typed-batch-n are each prefixed with (src/redis/client.ts), so that every script runs the same code.

-- Checks the type of `key`, then runs one read command on it and reports its TTL.
-- argv[1]  the expected Redis type: string | hash | set | list | zset
-- argv[2]  optional: the read command; argv[3..] its arguments after the key
-- Returns nil when the key does not exist, else {reply of the command (nil without one), TTL};
-- fails with "WRONGTYPE_OF <actual type>" when the key holds another type.
local function typed_read(key, argv)
  local actual = redis.call('TYPE', key)['ok']
  if actual == 'none' then return nil end
  if actual ~= argv[1] then return redis.error_reply('WRONGTYPE_OF ' .. actual) end
  local reply = false
  if #argv > 1 then reply = redis.call(argv[2], key, unpack(argv, 3)) end
  return {reply, redis.call('TTL', key)}
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
-- argv[4]  TTL in seconds to set after the write, or '' to leave the expiry as the write leaves it
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

  if argv[4] ~= '' and redis.call('EXISTS', key) == 1 then redis.call('EXPIRE', key, argv[4]) end
  local count = 0
  if argv[5] ~= '' then count = redis.call(argv[5], key) end
  return {existed and 1 or 0, reply, count}
end

-- Redis's messages for a stored value that is not a number of the kind asked, or a result out of range.
local NUMBER_ERRORS = {
  'not an integer', 'not a valid float', 'not a float', 'overflow', 'NaN or Infinity', 'not a number (NaN)',
}

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
    for _, text in ipairs(NUMBER_ERRORS) do
      if string.find(reply.err, text, 1, true) then return redis.error_reply('NOT_A_NUMBER ' .. reply.err) end
    end
    return reply
  end
  -- Lua numbers are doubles: an integer reply beyond 2^53 would lose digits, the stored string does not.
  if type(reply) == 'number' then
    if hash then reply = redis.call('HGET', key, argv[4]) else reply = redis.call('GET', key) end
  end
  if argv[2] ~= '' and not existed then redis.call('EXPIRE', key, argv[2]) end
  return {existed and 1 or 0, had and 1 or 0, reply, redis.call('TTL', key)}
end
