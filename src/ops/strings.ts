// String operations: each says which commands it sends and what their replies mean.
import { type IncrInput, incrOp } from './counters';
import { type KeyInput, keyOps } from './keys';
import { checkValueSize, created, type Limits, ok, present, readOp, valued, writeOp } from './op';

export interface StringSetInput extends KeyInput {
  value: string;
  ttl?: number;
  ifAbsent?: boolean;
}

export function stringOps(limits: Limits) {
  return {
    ...keyOps('string'),
    get: ({ key }: KeyInput) =>
      valued(
        readOp(
          'string',
          key,
          (reply) => {
            const [value, ttl] = present(reply, key);
            return ok({ value, ttl });
          },
          'GET',
        ),
        'value',
      ),
    /** SET replaces the value and its expiry: without `ttl` the key no longer expires. */
    set: ({ key, value, ttl, ifAbsent }: StringSetInput) => {
      checkValueSize(value, limits);
      const options = { condition: ifAbsent ? 'absent' : '', ttl } as const;
      return writeOp(
        'string',
        key,
        options,
        (r) => created(r?.[0] === 0, { success: true, key }),
        'SET',
        value,
      );
    },
    /** A missing key counts from 0; `ttl` applies only when this call creates the key. */
    incr: (input: IncrInput) => incrOp('string', input, { key: input.key }),
  };
}

export type StringOps = ReturnType<typeof stringOps>;
