-- rate-limit-increment-1: rate-limit-redis's increment script with a count; one call stands for ARGV[1] calls
-- of that script in a row. Returns { hits, ms left in the window }.
-- KEYS[1]  the counter
-- ARGV     the hits to add, then the window in ms
local by = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local timeToExpire = redis.call('PTTL', KEYS[1])
if timeToExpire <= 0 then
  redis.call('SET', KEYS[1], by, 'PX', windowMs)
  return { by, windowMs }
end
return { redis.call('INCRBY', KEYS[1], by), timeToExpire }
