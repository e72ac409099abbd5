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

/** One plain command on the data connection, without a deadline of its own: for `together`. */
export function sent(store: Store, name: string, ...args: unknown[]): Promise<unknown> {
  const fn = (store.redis as unknown as Record<string, Invoke>)[name] as Invoke;
  return fn.apply(store.redis, args);
}

/**
 * The replies of commands sent in the same turn (`sent`, so in the connection's one write), each as `plain` answers
 * it (an undefined command: undefined), under one deadline: one timer for all of them, not one each. A command not
 * answered within the deadline answers ioredis's own timeout error, as `plain`'s does.
 */
export function together(
  store: Store,
  commands: readonly (Promise<unknown> | undefined)[],
): Promise<Reply[]> {
  return new Promise((resolve) => {
    const replies: Reply[] = new Array(commands.length);
    let left = 1;
    let done = false;
    const finish = () => {
      done = true;
      clearTimeout(timer);
      resolve(replies);
    };
    const settle = (i: number, reply: Reply) => {
      if (done) return;
      replies[i] = reply;
      if (--left === 0) finish();
    };
    const timer = setTimeout(() => {
      commands.forEach((c, i) => {
        if (c && replies[i] === undefined) replies[i] = [new Error('Command timed out'), null];
      });
      finish();
    }, store.deadlineMs);
    for (let i = 0; i < commands.length; i++) {
      const command = commands[i];
      if (!command) continue;
      left++;
      command.then(
        (value) => settle(i, [null, value]),
        (err: Error) => settle(i, [err, null]),
      );
    }
    if (--left === 0) finish();
  });
}

/**
 * `name ...args` sent with Buffer replies (see `together`): by its `...Buffer` method (`callBuffer` drops the
 * command's name under a Cluster's auto-pipelining, ioredis 5), HGETALL as a Command of its own (the method's reply
 * transformer makes an object of it, field names decoded); one node's connection still writes it with the turn's
 * other commands (writeTogether).
 */
export function sentBuffers(store: Store, name: string, ...args: (string | number)[]): Promise<unknown> {
  if (name !== 'HGETALL') return sent(store, `${name.toLowerCase()}Buffer`, ...args);
  return store.redis.sendCommand(new Command(name, args, { replyEncoding: null })) as Promise<unknown>;
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
  const size: [number, number] = [0, 0];
  count(value, size);
  return size;
}

/** Adds `value`'s elements and bytes to `size` (no pair made per element). */
function count(value: unknown, size: [number, number]): void {
  if (typeof value === 'string') {
    size[0]++;
    size[1] += Buffer.byteLength(value);
  } else if (Buffer.isBuffer(value)) {
    size[0]++;
    size[1] += value.length;
  } else if (typeof value === 'number') size[0]++;
  else if (Array.isArray(value)) for (const item of value) count(item, size);
}

/** A reply that a missing key gives too (nil, 0, an empty array or string). */
export const empty = (v: unknown) =>
  v === null ||
  v === 0 ||
  ((typeof v === 'string' || Array.isArray(v) || Buffer.isBuffer(v)) && v.length === 0);
