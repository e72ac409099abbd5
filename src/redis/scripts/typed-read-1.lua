-- typed-read-1: checks the type of a key, then runs one read command on it and reports its TTL.
-- KEYS[1]  the key
-- ARGV[1]  the expected Redis type: string | hash | set
-- ARGV[2]  optional: the read command; ARGV[3..] its arguments after the key
-- Returns nil when the key does not exist, else {reply of the command (nil without one), TTL};
-- fails with "WRONGTYPE_OF <actual type>" when the key holds another type.
local actual = redis.call('TYPE', KEYS[1])['ok']
if actual == 'none' then return nil end
if actual ~= ARGV[1] then return redis.error_reply('WRONGTYPE_OF ' .. actual) end
local reply = false
if #ARGV > 1 then reply = redis.call(ARGV[2], KEYS[1], unpack(ARGV, 3)) end
return {reply, redis.call('TTL', KEYS[1])}
