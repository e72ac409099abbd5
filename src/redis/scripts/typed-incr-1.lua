-- typed-incr-1: typed_incr (typed.lua) of one key.
-- KEYS[1]  the key
-- ARGV     type, TTL on create, then the increment command and its arguments after the key
return typed_incr(KEYS[1], ARGV)
