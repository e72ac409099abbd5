-- typed-read-1: typed_read (typed.lua) of one key.
-- KEYS[1]  the key
-- ARGV     the expected type, then optionally the read command and its arguments after the key
return typed_read(KEYS[1], ARGV)
