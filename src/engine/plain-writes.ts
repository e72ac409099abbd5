// Writes that need no script (issue 36): a string's SET is one `SET key value [EX ttl] [NX] GET`, whose reply (the
// old value, or nil) says whether the key existed and which Redis refuses on another type, atomically; the ETag is
// digested here. Same replies as typed_write / typed_etag in typed.lua. With the change feed on, a write and its
// event must be one atomic call: the script does both.
import { ReplyError } from 'ioredis';
import type { Command } from '../ops/op';
import { feedOn, type Reply } from '../redis/client';
import { scriptMode } from '../redis/functions';
import type { Store } from '../redis/store';
import { stringEtag, wrongType } from './plain-reads';
import { sendScript } from './send';

/** typed.lua's ETAG_MAX_BYTES: an unconditional write answers a string's ETag unasked up to this size. */
const ETAG_MAX_BYTES = 16384;

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
 * functions library proves).
 */
export async function plainWrite(store: Store, slot: number, command: Command): Promise<Reply | undefined> {
  const set = stringSet(command);
  if (!set || feedOn(store.redis) || scriptMode(store.redis) !== 'functions') return undefined;
  const key = store.keyspace.user(command.keys[0] as string);
  const value = Buffer.from(set.value, command.bytes ? 'latin1' : 'utf8');
  const args: (string | Buffer)[] = [key, value];
  if (set.ttl !== '') args.push('EX', set.ttl);
  if (set.absent) args.push('NX');
  args.push('GET');
  // The old value as a Buffer: only whether there was one matters, and it is not decoded.
  const [err, old] = await sendScript(store, slot, 'setBuffer', () => args, true);
  if (err) return wrongType(store, key, err);
  if (set.absent && old !== null) return [new ReplyError('KEY_EXISTS the key exists'), null];
  const reply = [old === null ? 0 : 1, 'OK', 0];
  if (command.name === 'typedWrite') return [null, reply];
  const tag = set.answer === '0' || (set.answer === '3' && value.length > ETAG_MAX_BYTES);
  return [null, [reply, tag ? null : stringEtag(value)]];
}
