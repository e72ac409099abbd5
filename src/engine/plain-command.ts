// The plain commands under the engine's reads and writes without a script (issue 36): one command as a pipeline
// answers it, Redis's WRONGTYPE as typed.lua answers it, a reply's size as typed.lua's reply_size counts it.
import { hash } from 'node:crypto';
import { Command, ReplyError } from 'ioredis';
import type { Reply } from '../redis/client';
import type { Store } from '../redis/store';
import { failed, ok, withDeadline } from './send';

type Invoke = (...args: unknown[]) => Promise<unknown>;

/** A SHA-1 in hex by Node's one-shot `crypto.hash` (half createHash's cost for short inputs; Node 20.12+). */
export const sha1 = (data: string | Buffer): string => hash('sha1', data, 'hex');

/** One plain command on the data connection, its reply as a pipeline answers it. */
export function plain(store: Store, name: string, ...args: unknown[]): Promise<Reply> {
  const fn = (store.redis as unknown as Record<string, Invoke>)[name] as Invoke;
  return withDeadline(fn.apply(store.redis, args), store.deadlineMs).then(ok, failed);
}

/**
 * `name ...args` with Buffer replies, as `plain` answers it: by its `...Buffer` method (`callBuffer` drops the
 * command's name under a Cluster's auto-pipelining, ioredis 5), HGETALL as a Command of its own (the method's reply
 * transformer makes an object of it, field names decoded); one node's connection still writes it with the turn's
 * other commands (writeTogether).
 */
export function plainBuffers(store: Store, name: string, ...args: (string | number)[]): Promise<Reply> {
  if (name !== 'HGETALL') return plain(store, `${name.toLowerCase()}Buffer`, ...args);
  const sent = store.redis.sendCommand(new Command(name, args, { replyEncoding: null })) as Promise<unknown>;
  return withDeadline(sent, store.deadlineMs).then(ok, failed);
}

/**
 * Redis's WRONGTYPE as typed.lua answers it, with the key's actual type (asked only then); other errors as they are.
 * A key deleted or given the `expected` type since keeps Redis's own WRONGTYPE (409 without the type).
 */
export async function wrongType(store: Store, key: string, err: Error, expected: unknown): Promise<Reply> {
  if (!err.message.startsWith('WRONGTYPE')) return [err, null];
  const [typeErr, actual] = await plain(store, 'type', key);
  if (typeErr) return [typeErr, null];
  if (actual === 'none' || actual === expected) return [err, null];
  return [new ReplyError(`WRONGTYPE_OF ${actual}`), null];
}

/** The elements and bytes of a reply, as typed.lua's reply_size counts them. */
export function replySize(value: unknown): [number, number] {
  if (typeof value === 'string') return [1, Buffer.byteLength(value)];
  if (Buffer.isBuffer(value)) return [1, value.length];
  if (typeof value === 'number') return [1, 0];
  if (!Array.isArray(value)) return [0, 0];
  let [elements, bytes] = [0, 0];
  for (const item of value) {
    const [e, b] = replySize(item);
    elements += e;
    bytes += b;
  }
  return [elements, bytes];
}

/** A reply that a missing key gives too (nil, 0, an empty array or string). */
export const empty = (v: unknown) =>
  v === null ||
  v === 0 ||
  ((typeof v === 'string' || Array.isArray(v) || Buffer.isBuffer(v)) && v.length === 0);
