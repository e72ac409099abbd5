-- typed-etag-1: typed_etag (typed.lua) of one key: a read, write or increment under If-Match, answering the ETag.
-- KEYS[1]  the key
-- ARGV     'r' | 'w' | 'i' with '1' (answer the ETag) or '0' and the precondition, then the operation's arguments
return typed_etag(KEYS[1], ARGV)
