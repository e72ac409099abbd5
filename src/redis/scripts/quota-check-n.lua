-- quota-check-n: decides, for several identifiers of one rate-limit policy at once, whether `cost` fits, and with
-- 'check' spends it on every identifier, or on none when one of them is out of quota. Redis's clock decides.
-- KEYS[1]   the policy: a hash of algorithm, limit, period_ms, burst
-- KEYS[2]   its overrides: a hash identifier -> '<limit>:<burst>'
-- KEYS[3..] one counter per identifier (a hash; field `a` names the algorithm that wrote it)
-- ARGV      'check' | 'peek', the cost, then the identifiers (in the order of KEYS[3..])
-- Returns false when the policy does not exist, else {allowed, period_ms, then per identifier {allowed, limit,
-- remaining, ms until reset, ms until retry}}.
local p = redis.call('HMGET', KEYS[1], 'algorithm', 'limit', 'period_ms', 'burst')
if not p[1] then return false end
local algorithm, period = p[1], tonumber(p[3])
local spend, cost = ARGV[1] == 'check', tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local floor, ceil, max = math.floor, math.ceil, math.max

-- Each returns allowed, remaining (after spending `cost` when `spent`), ms until reset, ms until a retry may
-- succeed, and the counter's fields and TTL once `cost` is spent.
local function fixed(key, limit, _, spent)
  local w = now - now % period
  local c = redis.call('HMGET', key, 'a', 'w', 'n')
  local n = (c[1] == algorithm and tonumber(c[2]) == w) and tonumber(c[3]) or 0
  local ok = n + cost <= limit
  local reset = w + period - now
  local used = n + ((ok and spent) and cost or 0)
  return ok, limit - used, reset, ok and 0 or reset, {'a', algorithm, 'w', w, 'n', n + cost}, reset
end

local function sliding(key, limit, _, spent)
  local w = now - now % period
  local c = redis.call('HMGET', key, 'a', 'w', 'n', 'p')
  local n, prev = 0, 0
  if c[1] == algorithm then
    local cw = tonumber(c[2])
    if cw == w then n, prev = tonumber(c[3]), tonumber(c[4])
    elseif cw == w - period then prev = tonumber(c[3]) end
  end
  local used = prev * (period - (now - w)) / period + n
  local ok = used + cost <= limit
  local reset = w + period - now
  local retry = 0
  if not ok then
    -- The previous window's weight falls as time passes: when does what is left of it make room for `cost`?
    local room = limit - n - cost
    retry = (prev > 0 and room >= 0) and max(1, ceil(w + period * (1 - room / prev) - now)) or reset
  end
  local after = used + ((ok and spent) and cost or 0)
  return ok, floor(limit - after), reset, retry, {'a', algorithm, 'w', w, 'n', n + cost, 'p', prev}, reset + period
end

local function bucket(key, limit, burst, spent)
  local interval = period / limit
  local capacity = burst * interval
  local c = redis.call('HMGET', key, 'a', 'tat')
  local tat = (c[1] == algorithm and tonumber(c[2]) and tonumber(c[2]) > now) and tonumber(c[2]) or now
  local nextTat = tat + cost * interval
  local ok = nextTat - capacity <= now
  local level = (ok and spent) and nextTat or tat
  local remaining = floor((capacity - (level - now)) / interval + 1e-9)
  local retry = ok and 0 or ceil(nextTat - capacity - now)
  return ok, remaining, ceil(level - now), retry, {'a', algorithm, 'tat', string.format('%.3f', nextTat)},
    ceil(nextTat - now) + 1
end

local decide = {fixed_window = fixed, sliding_window = sliding, token_bucket = bucket}
local function limits(id)
  local over = redis.call('HGET', KEYS[2], id)
  if not over then return tonumber(p[2]), tonumber(p[4]) end
  local l, b = string.match(over, '^(%d+):(%d+)$')
  return tonumber(l), tonumber(b)
end

-- First whether every identifier has room; then each one's answer, spending on all of them or on none.
local all = 1
for i = 3, #KEYS do
  local limit, burst = limits(ARGV[i])
  if not decide[algorithm](KEYS[i], limit, burst, false) then all = 0 end
end
local spent = spend and all == 1
local answers = {}
for i = 3, #KEYS do
  local limit, burst = limits(ARGV[i])
  local ok, remaining, reset, retry, write, ttl = decide[algorithm](KEYS[i], limit, burst, spent)
  answers[#answers + 1] = {ok and 1 or 0, limit, max(0, remaining), reset, retry}
  if spent then
    redis.call('HSET', KEYS[i], unpack(write))
    redis.call('PEXPIRE', KEYS[i], ttl)
  end
end
return {all, period, answers}
