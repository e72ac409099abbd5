// Counters: INCRBY / INCRBYFLOAT on a string, HINCRBY / HINCRBYFLOAT on a hash field, answered losslessly.
import { created, type Op, type RedisType } from './op';

export interface IncrInput {
  key: string;
  /** An integer increments with INCRBY (64-bit integers), anything else with INCRBYFLOAT. Default 1. */
  by?: number;
  /** Set only when this call creates the key: a fixed window starts with the first increment. */
  ttl?: number;
}

/** [key existed, field existed, new value as Redis stores it, TTL]: see typed_incr in typed.lua. */
type IncrReply = [number, number, string, number];

/**
 * The new value both ways: `value_string` exactly as Redis holds it, `value` as a JSON number only where a
 * JavaScript client reads it without loss (beyond ±(2^53 - 1) a JSON number would be rounded, so it is null).
 */
export function counterValue(stored: string): { value: number | null; value_string: string } {
  const n = Number(stored);
  const exact = Number.isFinite(n) && (!Number.isInteger(n) || Number.isSafeInteger(n));
  return { value: exact ? n : null, value_string: stored };
}

/** One increment; `field` for a hash. 201 when it created the key (string) or the field (hash). */
export function incrOp(
  type: RedisType,
  { key, by = 1, ttl }: IncrInput,
  body: Record<string, unknown>,
  field?: string,
): Op {
  const integer = Number.isInteger(by);
  const hash = field !== undefined;
  const command = `${hash ? 'H' : ''}INCRBY${integer ? '' : 'FLOAT'}`;
  // String(by) of a safe integer has no exponent; a fraction's exponent form ('1e-7') Redis parses as well.
  const args = hash ? [field, String(by)] : [String(by)];
  return {
    writes: true,
    keys: [key],
    commands: [{ name: 'typedIncr', keys: [key], args: [type, ttl ?? '', command, ...args] }],
    result: ([reply]) => {
      const [, had, stored, remaining] = reply as IncrReply;
      return created(had === 0, { success: true, ...body, ...counterValue(stored), ttl: remaining });
    },
  };
}
