// The batch's floor (baseline (b), bench/baseline-node.ts; script-cost's plain row): one EVALSHA running
// `SET key value GET` for each key, the least an atomic, type-checked batch of sets costs Redis.
import type Redis from 'ioredis';

const SET_EACH = `local out = {}
for i = 1, #KEYS do
  local reply = redis.pcall('SET', KEYS[i], ARGV[i], 'GET')
  out[i] = type(reply) == 'table' and reply.err and 0 or 1
end
return out`;

/** Teaches a client the script (`setEach` below calls it). */
export function defineSetEach(redis: Redis): void {
  redis.defineCommand('setEach', { lua: SET_EACH });
}

/** 1 for each key set, 0 for a key of another type (its own failure; the others still apply). */
export const setEach = (redis: Redis, keys: string[], values: string[]): Promise<number[]> =>
  (redis as unknown as { setEach(n: number, ...args: string[]): Promise<number[]> }).setEach(
    keys.length,
    ...keys,
    ...values,
  );
