// The shape of an operation, and helpers to build the commands of our two Lua scripts.
import { ApiError, notFound } from '../errors';
import type { Capabilities } from '../redis/capabilities';
import type { RedisClient } from '../redis/client';
import type { Store } from '../redis/store';
import type { RedisType, SizeCommand } from '../redis/types';

export type { RedisType, SizeCommand };

/** A Redis call: an ioredis method (a plain command or one of our scripts), its user keys, the rest. */
export interface Command {
  readonly name: string;
  readonly keys: readonly string[];
  readonly args: readonly (string | number)[];
  /** The string arguments are byte strings (ops/encoding.ts), sent as their bytes. */
  readonly bytes?: boolean;
  /** Replies as Buffers (then byte strings): values that may be any bytes. */
  readonly buffers?: boolean;
}

export interface Outcome {
  readonly status: 200 | 201;
  readonly body: Record<string, unknown>;
  /** The key's ETag (quoted), when the request asked for it (see etag.ts); sent as the ETag header. */
  readonly etag?: string;
  /** Answered as these bytes (application/octet-stream) instead of the JSON body. */
  readonly bytes?: Buffer;
}

/**
 * One operation (string set, hash get field, ...), defined once and run alone by a route or
 * many at a time by a batch: its Redis commands, and how their replies become an outcome.
 * `result` gets the replies in command order and throws an ApiError for a failed outcome.
 */
export interface Op {
  readonly writes: boolean;
  readonly keys: readonly string[];
  readonly commands: readonly Command[];
  result(replies: unknown[]): Outcome;
  /**
   * Run by a route (never by a batch) instead of answering 404 not_found: a list pop's bounded wait for an item
   * (ops/list-wait.ts). `abandoned` is aborted when the client goes away; `client` is who the wait counts against
   * (a credential or an address: SVC_LIST_MAX_WAITERS_PER_CLIENT); `block` sends its blocking command.
   */
  readonly whenEmpty?: (
    store: Store,
    abandoned: AbortSignal,
    client: string,
    block: Blocking,
    bytes?: boolean,
  ) => Promise<Outcome>;
  /** The answer's fields that hold stored values (encoded under `encoding: base64`, checked as UTF-8 otherwise). */
  readonly values?: readonly string[];
  /** The operation removes the values it answers (a pop): it cannot be run again to read them as bytes. */
  readonly pops?: boolean;
  /** The same read with Buffer replies, after its text answer held U+FFFD (see ops/encoding.ts). */
  readonly reread?: () => Op;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * `{ ...op, ...changes }`, built member by member (an optional member left undefined is left out): a spread of an operation takes
 * V8's slow path (operations come in many shapes), ~0.3-0.5 µs each, and a request's operation goes through several
 * wrappers (values, ETag, encoding). A member added to Op must be copied here too (tests/op-changed.test.ts fails to
 * compile until it is).
 */
export function changed(op: Op, changes: Partial<Op>): Op {
  const out: Mutable<Op> = {
    writes: changes.writes ?? op.writes,
    keys: changes.keys ?? op.keys,
    commands: changes.commands ?? op.commands,
    result: changes.result ?? op.result,
  };
  const whenEmpty = 'whenEmpty' in changes ? changes.whenEmpty : op.whenEmpty;
  if (whenEmpty !== undefined) out.whenEmpty = whenEmpty;
  const values = 'values' in changes ? changes.values : op.values;
  if (values !== undefined) out.values = values;
  const pops = 'pops' in changes ? changes.pops : op.pops;
  if (pops !== undefined) out.pops = pops;
  const reread = 'reread' in changes ? changes.reread : op.reread;
  if (reread !== undefined) out.reread = reread;
  return out;
}

/** `op` whose answer's `fields` hold stored values. */
export const valued = (op: Op, ...fields: string[]): Op => changed(op, { values: fields });

/** A table of operations with the value fields of some declared by name (`pops`: those that remove them). */
// biome-ignore lint/suspicious/noExplicitAny: each operation takes an input of its own
export function declareValues<T extends Record<string, (input: any) => Op>>(
  table: T,
  values: Partial<Record<keyof T, readonly string[]>>,
  pops: readonly (keyof T)[] = [],
): T {
  const out: Record<string, unknown> = { ...table };
  for (const [name, fields] of Object.entries(values)) {
    const build = table[name] as (input: unknown) => Op;
    const popping = pops.includes(name);
    out[name] = popping
      ? (input: unknown) => changed(build(input), { values: fields, pops: true })
      : (input: unknown) => changed(build(input), { values: fields });
  }
  return out as T;
}

/**
 * Sends one blocking command on `client` (a connection of its own) and resolves to its reply: the engine's
 * runBlocking (engine/run.ts) bound to the store, so that an operation never reaches up to the engine.
 */
export type Blocking = (
  client: RedisClient,
  command: Command,
  args: (redisKey: string) => (string | number)[],
  waitMs: number,
  done?: () => Promise<void>,
) => Promise<unknown>;

export interface Limits {
  readonly maxValueBytes: number;
  /** The longest `wait` of a list pop, in seconds (SVC_LIST_MAX_WAIT; 30 when not given). */
  readonly listMaxWait?: number;
  /**
   * The capability probe's latest answer, for what the server lacks (redis/capabilities.ts fieldExpiry); undefined
   * before it answered, and where no server is behind (contract generation, tests of the operations alone).
   */
  readonly capabilities?: () => Capabilities | undefined;
}

export const ok = (body: Record<string, unknown>): Outcome => ({ status: 200, body });
export const created = (isNew: boolean, body: Record<string, unknown>): Outcome => ({
  status: isNew ? 201 : 200,
  body,
});

/** Reads a key of one type: the reply of `command` (if any) and the TTL, or null when the key is missing. */
export function typedRead(type: RedisType, key: string, ...command: (string | number)[]): Command {
  return { name: 'typedRead', keys: [key], args: [type, ...command] };
}

export interface WriteOptions {
  condition?: '' | 'absent' | 'present';
  replace?: boolean;
  ttl?: number;
  /** Seconds until the field the command writes first expires (HEXPIRE); the key's own expiry is left alone. */
  fieldTtl?: number;
  count?: '' | SizeCommand;
  stride?: 0 | 1 | 2;
}

/** What a whole hash or set write (POST) asks for: create-only, merge or replace, a TTL. */
export interface CollectionWrite {
  ifAbsent?: boolean;
  mode?: 'merge' | 'replace';
  ttl?: number;
}

/** The write options of a hash or set POST; `count` and `stride` name the type's size and variadic commands. */
export function collectionWrite(
  { ifAbsent, mode = 'merge', ttl }: CollectionWrite,
  count: SizeCommand,
  stride: 1 | 2,
): WriteOptions {
  return { condition: ifAbsent ? 'absent' : '', replace: mode === 'replace', ttl, count, stride };
}

/**
 * Writes a key of one type with conditions and TTL handling (see typed-write-1.lua). The arguments before the
 * command's are strings, as a batch's script argument carries them (engine/run.ts scriptOps).
 */
export function typedWrite(
  type: RedisType,
  key: string,
  options: WriteOptions,
  ...command: (string | number)[]
): Command {
  return writeCommand(type, key, options, command);
}

function writeCommand(
  type: RedisType,
  key: string,
  { condition = '', replace = false, ttl, fieldTtl, count = '', stride = 0 }: WriteOptions,
  command: readonly (string | number)[],
): Command {
  // typed.lua: 'F<seconds>' is the TTL of the field written, '' none, else the key's.
  const expiry = fieldTtl !== undefined ? `F${fieldTtl}` : ttl === undefined ? '' : String(ttl);
  const flags: (string | number)[] = [type, condition, replace ? '1' : '0', expiry, count, STRIDES[stride]];
  return { name: 'typedWrite', keys: [key], args: flags.concat(command) };
}

const STRIDES = ['0', '1', '2'] as const;

/** typed_read's reply: the command's, the key's TTL, and for 'FIELD' the field's TTL; null when the key is missing. */
export type ReadReply = [unknown, number, number?] | null;
export type WriteReply = [number, unknown, number] | null;

/** Values are limited in bytes, which JSON Schema cannot express. */
export function checkValueSize(value: string, limits: Limits, what = 'value'): void {
  // UTF-8 takes at most 3 bytes per UTF-16 code unit: a value this short needs no count.
  if (value.length * 3 <= limits.maxValueBytes) return;
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > limits.maxValueBytes) {
    throw new ApiError(
      'payload_too_large',
      `The ${what} is ${bytes} bytes; the limit is ${limits.maxValueBytes} bytes`,
    );
  }
}

/** An operation of one read command on one key of the given type. */
export function readOp(
  type: RedisType,
  key: string,
  result: (reply: ReadReply) => Outcome,
  ...command: (string | number)[]
): Op {
  const read = typedRead(type, key, ...command);
  return {
    writes: false,
    keys: read.keys,
    commands: [read],
    result: (replies) => result(replies[0] as ReadReply),
  };
}

/** An operation of one write command on one key of the given type. */
export function writeOp(
  type: RedisType,
  key: string,
  options: WriteOptions,
  result: (reply: WriteReply) => Outcome,
  ...command: (string | number)[]
): Op {
  const write = writeCommand(type, key, options, command);
  return {
    writes: true,
    keys: write.keys,
    commands: [write],
    result: (replies) => result(replies[0] as WriteReply),
  };
}

/** A reply that is null because the key is missing means 404 not_found. */
export function present<T>(reply: T | null, key: string): T {
  if (reply === null || reply === undefined) throw notFound(key);
  return reply;
}

/**
 * A write of one field or member whose reply says whether it changed anything (HSET, HSETNX and SADD answer
 * 1 when it is new; HDEL and SREM 1 when it was there). `refuse` is the error to answer when the request's
 * condition (If-None-Match, If-Match) needed a change that did not happen; nothing was written then.
 */
export function elementOp(
  type: RedisType,
  key: string,
  refuse: (() => ApiError) | false | undefined,
  result: (changed: boolean) => Outcome,
  ...command: (string | number)[]
): Op {
  return elementWriteOp(type, key, {}, refuse, result, ...command);
}

/** elementOp with write options (a field's TTL). */
export function elementWriteOp(
  type: RedisType,
  key: string,
  options: WriteOptions,
  refuse: (() => ApiError) | false | undefined,
  result: (changed: boolean) => Outcome,
  ...command: (string | number)[]
): Op {
  return writeOp(
    type,
    key,
    options,
    (reply) => {
      const changed = reply?.[1] === 1;
      if (refuse && !changed) throw refuse();
      return result(changed);
    },
    ...command,
  );
}
