-- key-delete-1: DEL of a key of any type (DELETE /store/keys/{key}) with its change event (typed.lua's delete_any).
-- KEYS[1]  the key
-- Returns 1 when the key existed, else 0.
return delete_any(KEYS[1])
