-- semaphore-status-1: the places held now, without their tokens. Returns {holders, the largest fence held, ms until
-- the first holder's TTL runs out}, or {0} when none is held.
-- KEYS[1]  the holders (see semaphore-acquire-2.lua)
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local live = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. nowMs, '+inf', 'WITHSCORES')
if #live == 0 then return {0} end
local largest = 0
for i = 1, #live, 2 do
  largest = math.max(largest, tonumber(string.match(live[i], '^(%d+)')) or 0)
end
return {#live / 2, largest, tonumber(live[2]) - nowMs}
