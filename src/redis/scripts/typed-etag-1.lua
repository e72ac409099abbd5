-- typed-etag-1: typed_etag (typed.lua) of one key: a read, write or increment under If-Match, answering the ETag.
-- KEYS[1]  the key
-- ARGV     'r' | 'w' | 'i', the precondition, '1' to answer the ETag, then the operation's own arguments
return typed_etag(KEYS[1], ARGV)
