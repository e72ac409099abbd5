-- typed-batch-n: many typed reads and writes (typed.lua) in one call, as atomic as MULTI ... EXEC around
-- typed-read-1 and typed-write-1 calls, without a command (and its reply) per operation.
-- KEYS[i]  the key of operation i
-- ARGV     for each operation in order: 'r' (typed_read) or 'w' (typed_write), its argument count n, its n arguments
-- Returns one reply per operation, in order: what its own script returns (nil as nil), or its error. An
-- error fails that operation only, as in a MULTI.
local replies = {}
local at = 1
for i = 1, #KEYS do
  local run = ARGV[at] == 'w' and typed_write or typed_read
  local argv = {}
  for j = 1, tonumber(ARGV[at + 1]) do argv[j] = ARGV[at + 1 + j] end
  at = at + 2 + #argv
  local ok, reply = pcall(run, KEYS[i], argv)
  if not ok and type(reply) ~= 'table' then reply = redis.error_reply(tostring(reply)) end
  -- A nil would end the reply array: false becomes a nil reply in its place.
  if reply == nil then reply = false end
  replies[i] = reply
end
return replies
