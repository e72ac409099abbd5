// One queue script call: through the durable writer and the failover fence when it writes (engine/send.ts), its
// answer parsed from JSON, the scripts' plain answers ('missing', 'exists', ...) turned into API errors.
import calculateSlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import { type Idempotency, isRecorded, sendIdempotent } from '../engine/idempotent';
import { sendScript, streamOf } from '../engine/send';
import { ApiError } from '../errors';
import { QUEUE_WRITES, type QueueScript } from '../redis/queue-scripts';
import type { Store } from '../redis/store';

const WRITES: ReadonlySet<string> = new Set(QUEUE_WRITES);

export const queueMissing = (name: string) =>
  new ApiError('not_found', `Queue '${name}' does not exist (create it with PUT /store/queues/${name})`);

/**
 * The queue's script `script` with `args` after its base key; a write's name (for its event) comes first. Under an
 * Idempotency-Key (a send), its reply is recorded in the same call and a retry answers it again (engine/idempotent.ts).
 */
export async function callQueue(
  store: Store,
  name: string,
  script: QueueScript,
  args: (string | number)[],
  idem?: Idempotency,
): Promise<unknown> {
  const key = store.keyspace.queue(name);
  const writes = WRITES.has(script);
  const slot = store.redis instanceof Cluster ? calculateSlot(key) : 0;
  const event = writes ? [store.keyspace.prefix + name] : [];
  const stream = () => (writes && store.streams ? [streamOf(store.streams, key)] : []);
  const rest = () => [...event, ...args, ...stream()];
  const answer = idem
    ? await sendIdempotent(store, slot, script, [key], rest, idem)
    : await sendScript(store, slot, script, () => [key, ...rest()], writes);
  if (isRecorded(answer)) throw new Error('a queue script recorded no reply');
  const [err, reply] = answer;
  if (err) throw err;
  if (reply === 'missing') throw queueMissing(name);
  return reply;
}

/** A script's JSON answer; Lua's cjson writes an empty array as `{}`. */
export function parsed<T>(reply: unknown): T {
  return JSON.parse(String(reply)) as T;
}

export const list = <T>(value: T[] | Record<string, never>): T[] => (Array.isArray(value) ? value : []);
