// Writes that need no script (issue 36): a string's SET is one `SET key value [EX ttl] [NX] GET`, whose reply (the
// old value, or nil) says whether the key existed and which Redis refuses on another type, atomically; the ETag is
// digested here. Same replies as typed_write / typed_etag in typed.lua. With the change feed on, a write and its
// event must be one atomic call: the script does both.
import { ReplyError } from 'ioredis';
import type { Command } from '../ops/op';
import { takesSetNxGet } from '../redis/capability-watch';
import { feedOn, type Reply } from '../redis/client';
import { scriptMode } from '../redis/functions';
import type { Store } from '../redis/store';
import { wrongType } from './plain-command';
import { stringEtag } from './plain-reads';
import { sendScript, streamOf } from './send';

/** typed.lua's ETAG_MAX_BYTES: an unconditional write answers a string's ETag unasked up to this size. */
const ETAG_MAX_BYTES = 16384;

/**
 * The largest value written by a plain SET ... GET. GET answers the old value, which for a key rewritten with
 * values of this size is about as large: a 64 KiB PUT over a 64 KiB value cost the gateway twice its CPU (bench
 * --compare). Larger values go to the script, whose reply holds no value.
 */
const PLAIN_SET_MAX_BYTES = 16384;

interface StringSet {
  readonly value: string;
  readonly ttl: string;
  readonly absent: boolean;
  /** typed_etag's answer code ('0' none, '1' / '2' always, '3' when the string is small), '' for no ETag command. */
  readonly answer: string;
}

/** The string SET `command` asks for when it needs no script: no precondition, no count, no replace. */
function stringSet(command: Command): StringSet | undefined {
  let { args } = command;
  let answer = '';
  if (command.name === 'typedEtag') {
    const head = String(args[0]);
    if (head.length !== 2 || head[0] !== 'w') return undefined;
    answer = head[1] as string;
    args = args.slice(1);
  } else if (command.name !== 'typedWrite') return undefined;
  // type, condition, replace, TTL, count, stride, the command, its value (ops/op.ts writeCommand)
  const [type, condition, replace, ttl, count, stride, name, value] = args;
  if (
    args.length !== 8 ||
    type !== 'string' ||
    name !== 'SET' ||
    replace !== '0' ||
    count !== '' ||
    stride !== '0'
  )
    return undefined;
  if (condition !== '' && condition !== 'absent') return undefined;
  return { value: String(value), ttl: String(ttl), absent: condition === 'absent', answer };
}

/**
 * The reply `command`'s script would give, from plain commands, or undefined when it needs its script (another
 * write, a precondition, the change feed on, or a server that may predate `SET ... NX GET`: Redis 7, which the
 * capability probe's version or the functions library proves; a managed Redis 7 that refuses FUNCTION has it too).
 */
export async function plainWrite(store: Store, slot: number, command: Command): Promise<Reply | undefined> {
  const set = stringSet(command);
  if (!set || feedOn(store.redis)) return undefined;
  if (scriptMode(store.redis) !== 'functions' && !takesSetNxGet(store.redis)) return undefined;
  // A byte string (ops/encoding.ts) goes as its bytes (one per character); text as ioredis sends it (UTF-8). Sized
  // before anything is copied: a larger value takes the script, which copies it itself.
  const encoding = command.bytes ? 'latin1' : 'utf8';
  if (Buffer.byteLength(set.value, encoding) > PLAIN_SET_MAX_BYTES) return undefined;
  const key = store.keyspace.user(command.keys[0] as string);
  const value = command.bytes ? Buffer.from(set.value, encoding) : set.value;
  const args: (string | Buffer)[] = [key, value];
  if (set.ttl !== '') args.push('EX', set.ttl);
  if (set.absent) args.push('NX');
  args.push('GET');
  // The old value as a Buffer: only whether there was one matters, and it is not decoded.
  const [err, old] = await sendScript(store, slot, 'setBuffer', () => args, true);
  if (err) return wrongType(store, key, err, 'string');
  if (set.absent && old !== null) return [new ReplyError('KEY_EXISTS the key exists'), null];
  const reply = [old === null ? 0 : 1, 'OK', 0];
  if (command.name === 'typedWrite') return [null, reply];
  const large = set.answer === '3' && Buffer.byteLength(set.value, encoding) > ETAG_MAX_BYTES;
  return [null, [reply, set.answer === '0' || large ? null : stringEtag(set.value, encoding)]];
}

/**
 * The values of a batch that is only plain string sets (no condition, TTL or If-Match), or undefined: those run as
 * one string-sets-n call, keys and values as its arguments (as the floor's batch sends them), not typed-batch-n's
 * JSON of typed_write arguments.
 */
export function setValues(commands: readonly Command[]): (string | Buffer)[] | undefined {
  const values: (string | Buffer)[] = [];
  for (const c of commands) {
    const set = c.name === 'typedWrite' ? stringSet(c) : undefined;
    if (!set || set.absent || set.ttl !== '') return undefined;
    values.push(c.bytes ? Buffer.from(set.value, 'latin1') : set.value);
  }
  return values;
}

/** Runs plain string sets (setValues) atomically: each one's reply as its typed_write's, or its error. */
export async function runStringSets(
  store: Store,
  slot: number,
  keys: readonly string[],
  values: readonly (string | Buffer)[],
): Promise<unknown[]> {
  const args = () => {
    const all: (string | number | Buffer)[] = [keys.length, ...keys, ...values];
    // On a Cluster with the feed on, the stream of the master holding this slot's keys (see send.ts argv).
    if (store.streams) all.push(streamOf(store.streams, keys[0] as string));
    return all;
  };
  const [err, replies] = await sendScript(store, slot, 'stringSets', args, true);
  if (err) throw err;
  return (replies as unknown[]).map((r) => (r instanceof Error ? r : [r, 'OK', 0]));
}
