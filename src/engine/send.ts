// How one Redis call is sent: where operations run (Store), the service's own deadline, the durable writer and
// the failover fence for writes, and on a Cluster with the change feed the stream a write script appends to.
import calculateSlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import { ApiError, REDIS_RETRY_AFTER, toApiError } from '../errors';
import type { Command } from '../ops/op';
import { FEED_SCRIPTS, type Reply } from '../redis/client';
import type { DurableWriter } from '../redis/durable';
import type { ClusterStreams } from '../redis/feed-streams';
import { asFunction, libraryMissing, reloaded } from '../redis/functions';
import type { Store } from '../redis/store';

export type { Store };

type Invoke = (...args: unknown[]) => Promise<unknown>;
export function argv(store: Store, c: Command): (string | number | Buffer)[] {
  const keys = c.keys.map(store.keyspace.user);
  const args = c.bytes ? c.args.map((a) => (typeof a === 'string' ? Buffer.from(a, 'latin1') : a)) : c.args;
  if (!store.streams || !FEED_SCRIPTS.has(c.name)) return [...keys, ...args];
  return [...keys, ...args, streamOf(store.streams, keys[0] as string)];
}

/** The ioredis method of a command: its `...Buffer` variant when it wants Buffer replies. */
export const methodOf = (c: Command): string => (c.buffers ? `${c.name}Buffer` : c.name);

/** The stream of the master holding `redisKey` (Cluster): 503 until ioredis has loaded the slot map. */
export function streamOf(streams: ClusterStreams, redisKey: string): string {
  const stream = streams.forKey(redisKey);
  if (stream === '') {
    throw new ApiError('service_unavailable', 'The Redis Cluster slot map is not loaded yet; retry shortly', {
      retryAfter: REDIS_RETRY_AFTER,
    });
  }
  return stream;
}

/** Rejects with ioredis's own timeout error (a 503) when `promise` has not settled within `ms`. */
export function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('Command timed out')), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

function call(store: Store, name: string, args: unknown[]): Promise<unknown> {
  const fn = (store.redis as unknown as Record<string, Invoke>)[name];
  if (!fn) throw new Error(`unknown Redis command ${name}`);
  return withDeadline(fn.apply(store.redis, args), store.deadlineMs);
}

/**
 * Sends one Redis call: a write through the durable writer when replicas must confirm it, anything else on the
 * data connection. Resolves to its value or error, as a pipeline would answer it; a write that replicas did not
 * confirm is a 503 (it reached the primary, so its outcome is unknown).
 */
async function send(
  store: Store,
  slot: number,
  name: string,
  args: unknown[],
  writes: boolean,
  again = true,
): Promise<Reply> {
  const fcall = asFunction(store.redis, name, args);
  if (!fcall) return sendAs(store, slot, name, args, writes);
  const reply = await sendAs(store, slot, fcall[0], fcall[1], writes);
  // The server lacks the library (a restart without persistence, FUNCTION FLUSH, a new master): nothing ran.
  if (!again || !libraryMissing(reply[0]) || !(await reloaded(store.redis))) return reply;
  return send(store, slot, name, args, writes, false);
}

/** `send` of one ioredis method (a script, FCALL, a command). */
async function sendAs(
  store: Store,
  slot: number,
  name: string,
  args: unknown[],
  writes: boolean,
): Promise<Reply> {
  const { durable } = store;
  if (store.maxArguments) checkWords(store.maxArguments, name, args);
  if (writes && store.fence?.closed) throw failingOver();
  if (!(writes && durable)) return call(store, name, args).then(ok, failed);
  const { reply, confirmed } = await withDeadline(durable.send(slot, name, args), durable.deadlineMs).catch(
    (err: Error) => {
      // Not answered in time: it may have reached the primary, and was certainly not confirmed.
      throw err.message === 'Command timed out' ? unconfirmed(durable) : err;
    },
  );
  if (!confirmed && reply[0] === null) throw unconfirmed(durable);
  return reply;
}

/**
 * `send`, and on a Cluster with the change feed on, once more when the script found the stream it was named on
 * another node (FEED_ELSEWHERE: it wrote nothing), after reloading the slot map: the stream is named again from it.
 */
export async function sendScript(
  store: Store,
  slot: number,
  name: string,
  args: () => unknown[],
  writes: boolean,
): Promise<Reply> {
  const reply = await send(store, slot, name, args(), writes);
  if (!store.streams || !reply[0]?.message.startsWith('FEED_ELSEWHERE')) return reply;
  await store.streams.reload();
  return send(store, slot, name, args(), writes);
}

/**
 * SVC_REDIS_MAX_ARGUMENTS (a managed Redis's cap, ElastiCache Serverless's 3,999): a call that would send a longer
 * command is refused before anything runs, since splitting it would lose its atomicity. A script call is
 * EVALSHA, its digest and key count, then its arguments (arrays among them are spread, as ioredis does). An /upstash
 * pipeline sends each command on its own, so only a command's own length counts.
 */
function checkWords(max: number, name: string, args: unknown[]): void {
  const spread = args.reduce((n: number, a) => n + (Array.isArray(a) ? a.length : 1), 0);
  // A script whose key count comes first (typedBatch, upstashBounded) has it among `args` already.
  const words = name === 'call' ? spread : spread + (typeof args[0] === 'number' ? 2 : 3);
  if (words > max)
    throw new ApiError(
      'invalid_request',
      `This request needs a Redis command of ${words} arguments; the server takes at most ${max} (SVC_REDIS_MAX_ARGUMENTS): send fewer fields, members, keys or operations at once`,
    );
}

export const ok = (value: unknown): Reply => [null, value];
export const failed = (err: Error): Reply => [err, null];

export function failingOver(): ApiError {
  return new ApiError(
    'service_unavailable',
    'The data store is failing over to a new primary; retry shortly',
    {
      retryAfter: REDIS_RETRY_AFTER,
    },
  );
}

export function unconfirmed(durable: DurableWriter): ApiError {
  return new ApiError(
    'service_unavailable',
    `The write reached the primary but ${durable.replicas} replica(s) did not confirm it within ` +
      `${durable.waitTimeoutMs} ms: its outcome is unknown; retry it if it is idempotent`,
    { retryAfter: REDIS_RETRY_AFTER },
  );
}

/**
 * One call of the service's own (a lock's, a rate-limit policy's) on the slot of its internal key `slotKey`: the
 * durable writer and the fence for a write, the deadline; resolves to its value, or rejects with an API error.
 */
export async function sendInternal(
  store: Store,
  name: string,
  slotKey: string,
  argv: readonly (string | number)[],
  writes: boolean,
): Promise<unknown> {
  const slot = store.redis instanceof Cluster ? calculateSlot(slotKey) : 0;
  const [err, value] = await sendScript(store, slot, name, () => [...argv], writes);
  if (err) throw toApiError(err);
  return value;
}
