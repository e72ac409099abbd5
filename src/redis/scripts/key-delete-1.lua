-- key-delete-1: DEL of a key of any type (DELETE /store/keys/{key}) with its change event (typed.lua's `changed`).
-- KEYS[1]  the key
-- Returns 1 when the key existed, else 0.
local kind = redis.call('TYPE', KEYS[1])['ok']
local deleted = redis.call('DEL', KEYS[1])
if deleted == 1 then changed(KEYS[1], kind, 'del') end
return deleted
