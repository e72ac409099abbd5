-- typed-write-1: typed_write (typed.lua) of one key.
-- KEYS[1]  the key
-- ARGV     type, condition, replace, TTL, count command, stride, then the write command (and flags) and its arguments
return typed_write(KEYS[1], ARGV)
