// Runs operations against Redis: one alone (a route) or many in one script call (a batch); replies become outcomes.
import calculateSlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import { ApiError, toApiError } from '../errors';
import { Reread, toBytes } from '../ops/encoding';
import { refusedWhole } from '../ops/etag';
import type { Blocking, Command, Op, Outcome } from '../ops/op';
import type { RedisClient, Reply } from '../redis/client';
import { finish, type Idempotency, isRecorded, sendIdempotent } from './idempotent';
import { plainRead } from './plain-reads';
import { plainWrite, runStringSets, setValues } from './plain-writes';
import { replyError, tooLarge } from './replies';
import {
  argv,
  failed,
  failingOver,
  methodOf,
  ok,
  type Store,
  sendScript,
  streamOf,
  unconfirmed,
  withDeadline,
} from './send';

export type { Store };

/** Told the duration (seconds) and command count of each Redis round trip, for statistics and metrics. */
export type RedisObserver = (seconds: number, commands: number) => void;

// Kept beside the client rather than passed by every caller, so that every route and batch is measured.
const observers = new WeakMap<RedisClient, RedisObserver>();

export function observeRedis(redis: RedisClient, observer: RedisObserver): void {
  observers.set(redis, observer);
}

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

/** Replies that came from Redis (values or Redis errors), not a connection failure: a round trip happened. */
const answered = (replies: Reply[]) => replies.every(([err]) => err === null || err.name === 'ReplyError');

/**
 * The outcome of `op` from its commands' replies, `values[from]` on (an Error instance is a command's error reply).
 * Client errors (4xx) fail one operation; anything else (Redis down, a bug) fails the whole request.
 */
function settle(op: Op, values: readonly unknown[], from = 0): Outcome | ApiError {
  try {
    const { commands } = op;
    const mine = values.slice(from, from + commands.length);
    for (let i = 0; i < mine.length; i++) {
      const value = mine[i];
      if (value instanceof Error) throw replyError(value, commands[i] as Command);
    }
    return op.result(mine);
  } catch (err) {
    const apiError = toApiError(err);
    if (apiError.status >= 500) throw apiError;
    return apiError;
  }
}

/**
 * Runs one operation. One command goes out alone (in one write with the other commands of its turn of the event
 * loop: writeTogether in redis/client.ts); several (set algebra reading many keys) run as a batch, so that they see
 * every key at the same moment (per hash slot on a Cluster). An operation with `whenEmpty` runs it instead of
 * answering 404 not_found; `abandoned` tells it that the client left.
 */
export async function runOp(
  store: Store,
  op: Op,
  abandoned?: AbortSignal,
  idem?: Idempotency,
  client = '',
): Promise<Outcome> {
  const [command] = op.commands;
  const once = op.writes ? idem : undefined;
  let outcome: Outcome | ApiError;
  if (op.commands.length === 1 && command) {
    const observer = observers.get(store.redis);
    const start = observer ? process.hrtime.bigint() : 0n;
    const slot = store.durable && op.writes ? slotOf(store, command) : 0;
    const args = () => argv(store, command);
    const keys = command.keys.map(store.keyspace.user);
    const rest = () => args().slice(keys.length);
    const reply = once
      ? await sendIdempotent(store, slot, methodOf(command), keys, rest, once, op.whenEmpty !== undefined)
      : ((op.writes ? await plainWrite(store, slot, command) : await plainRead(store, command)) ??
        (await sendScript(store, slot, methodOf(command), args, op.writes)));
    if (isRecorded(reply)) {
      if ('error' in reply) throw reply.error;
      return reply.outcome;
    }
    if (observer && answered([reply])) observer(seconds(start), 1);
    outcome = settle(op, [reply[0] ?? reply[1]]);
  } else {
    outcome = (await runBatch(store, [op], false, once)).outcomes[0] as Outcome | ApiError;
  }
  if (outcome instanceof Reread && op.reread) return runOp(store, op.reread());
  if (outcome instanceof ApiError) {
    if (op.whenEmpty && outcome.type === 'not_found')
      return waitThenRecord(store, op, abandoned, once, client);
    throw outcome;
  }
  return outcome;
}

/** A list pop's wait; under an Idempotency-Key its outcome is recorded (the claim its script kept, see idempotent.ts). */
async function waitThenRecord(
  store: Store,
  op: Op,
  abandoned: AbortSignal | undefined,
  idem: Idempotency | undefined,
  client: string,
): Promise<Outcome> {
  const wait = op.whenEmpty as NonNullable<Op['whenEmpty']>;
  const signal = abandoned ?? new AbortController().signal;
  const block: Blocking = (...args) => runBlocking(store, ...args);
  if (!idem) return wait(store, signal, client, block);
  const redisKey = store.keyspace.user(op.keys[0] ?? '');
  const outcome = await wait(store, signal, client, block).catch(async (err: unknown) => {
    await finish(store, redisKey, idem, toApiError(err));
    throw err;
  });
  await finish(store, redisKey, idem, outcome);
  return outcome;
}

/**
 * Sends one blocking command on a connection of its own (see redis/waiters.ts) and resolves to its reply; Redis
 * errors become API errors as for any command. Its deadline is the wait plus the usual one, so that a
 * legitimate wait is never cut short. `args(key)` builds the arguments around the key as Redis stores it.
 */
export async function runBlocking(
  store: Store,
  client: RedisClient,
  command: Command,
  args: (redisKey: string) => (string | number)[],
  waitMs: number,
  /** Told of a non-null reply before replicas are waited for (a pop's change event: the items are gone either way). */
  done: () => Promise<void> = async () => {},
): Promise<unknown> {
  if (store.fence?.closed) throw failingOver();
  const redisKey = store.keyspace.user(command.keys[0] ?? '');
  const [err, value] = await withDeadline(
    call(client, command, args(redisKey)),
    waitMs + store.deadlineMs,
  ).then(ok, failed);
  if (err) throw replyError(err, command);
  if (value !== null) await done();
  const { durable } = store;
  // A write that replicas must confirm: WAIT on the same connection, as the durable writer does (a Cluster
  // client would send WAIT to any node; there the pop is acknowledged by its primary alone).
  if (durable && value !== null && !(client instanceof Cluster)) {
    const confirmed = await withDeadline(
      client.call('WAIT', durable.replicas, durable.waitTimeoutMs),
      durable.deadlineMs,
    ).catch(() => 0);
    if (Number(confirmed) < durable.replicas) throw unconfirmed(durable);
  }
  return value;
}

/** A command on `client`, its replies as Buffers when it asks for them (ioredis's `...Buffer` command methods). */
function call(client: RedisClient, command: Command, args: (string | number)[]): Promise<unknown> {
  if (!command.buffers) return client.call(command.name, ...args);
  // callBuffer loses the command's name under auto-pipelining (ioredis 5): the named method keeps it.
  const method = (client as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[
    `${command.name.toLowerCase()}Buffer`
  ];
  if (!method) throw new Error(`no Buffer method for ${command.name}`);
  return method.apply(client, args);
}

export interface BatchOutcome {
  readonly outcomes: (Outcome | ApiError)[];
  /** False when the batch had to be split over several Redis Cluster slots. */
  readonly atomic: boolean;
}

/** How typed-batch-n names our three scripts. */
const BATCHED: Record<string, 'r' | 'w' | 'i' | 'e'> = {
  typedRead: 'r',
  typedWrite: 'w',
  typedIncr: 'i',
  typedEtag: 'e',
};

const NOT_ASCII = /[\u0080-\u00ff]/;
/** A lone UTF-16 surrogate as JSON.stringify writes it (lower-case hex); also matches a text `\\ud8..` (harmless). */
const LONE_SURROGATE = /\\ud[89a-f]/;

/** Buffers (at any depth) as UTF-8 text. */
const texts = (reply: unknown): unknown =>
  Buffer.isBuffer(reply) ? reply.toString('utf8') : Array.isArray(reply) ? reply.map(texts) : reply;

/** The hash slot a command's key lives in on a Cluster; 0 elsewhere (one primary holds every key). */
function slotOf(store: Store, c: Command): number {
  return store.redis instanceof Cluster ? calculateSlot(store.keyspace.user(c.keys[0] ?? '')) : 0;
}

/** A command's arguments as strings, or the same array when they are strings already. */
function strings(args: readonly (string | number)[]): readonly (string | number)[] {
  for (const arg of args) if (typeof arg !== 'string') return args.map(String);
  return args;
}

/**
 * The operations of `commands` as typed-batch-n's JSON argument: for each command its kind, then the array of its
 * arguments as strings (the command's own array when it holds only strings: nothing is copied). Each argument is
 * the string ioredis would have sent: lone UTF-16 surrogates become U+FFFD (as in UTF-8; `wellFormed`, only when
 * the JSON shows one). Byte strings with bytes beyond ASCII (ops/encoding.ts) go as ARGV of their own (`bytes`),
 * named in the JSON by their ARGV index.
 */
function scriptOps(commands: readonly Command[], bytes: Buffer[], wellFormed = false): string {
  const ops: unknown[] = [];
  for (const c of commands) {
    let args = strings(c.args);
    if (c.bytes || wellFormed) {
      args = args.map((arg) => {
        if (c.bytes && NOT_ASCII.test(arg as string)) return bytes.push(toBytes(arg as string)) + 2;
        return wellFormed ? (arg as string).toWellFormed() : arg;
      });
    }
    ops.push(BATCHED[c.name], args);
  }
  const json = JSON.stringify(ops);
  if (wellFormed || !LONE_SURROGATE.test(json)) return json;
  bytes.length = 0;
  return scriptOps(commands, bytes, true);
}

/**
 * Runs commands in one typed-batch-n call: atomic like MULTI/EXEC around the same script calls, but one
 * command for Redis and ioredis instead of one per operation (ioredis's per-command cost dominated batches).
 * The operations' arguments travel as one JSON argument (scriptOps): ioredis handles every argument of a command
 * on its own (flattening, type checks, a separate write), about 1 µs each, while JSON.stringify is one native call.
 * Resolves to one reply per command, an Error instance for a command's error reply.
 */
async function exec(
  store: Store,
  slot: number,
  commands: readonly Command[],
  all: boolean,
  idem?: Idempotency,
): Promise<unknown[]> {
  const keys: string[] = [];
  let writes = false;
  let buffers = false;
  for (const c of commands) {
    const kind = BATCHED[c.name];
    if (!kind || c.keys.length !== 1) throw new Error(`${c.name} on ${c.keys.length} keys cannot be batched`);
    writes ||= kind !== 'r';
    buffers ||= c.buffers === true;
    keys.push(store.keyspace.user(c.keys[0] as string));
  }
  const values = idem ? undefined : setValues(commands);
  if (values) return runStringSets(store, slot, keys, values);
  const bytes: Buffer[] = [];
  const json = scriptOps(commands, bytes);
  const tail = () => {
    const tail: (string | Buffer)[] =
      bytes.length > 0 ? [json, all ? 'all' : '', ...bytes] : all ? [json, 'all'] : [json];
    // On a Cluster with the feed on, the stream of the master holding this slot's keys (see argv).
    if (store.streams) tail.push(streamOf(store.streams, keys[0] as string));
    return tail;
  };
  const method = buffers ? 'typedBatchBuffer' : 'typedBatch';
  const reply =
    idem && writes
      ? await sendIdempotent(store, slot, method, keys, tail, idem)
      : await sendScript(store, slot, method, () => [keys.length, keys, tail()], writes);
  if (isRecorded(reply)) throw new Error('a batch has no recorded outcome');
  const [err, replies] = reply;
  if (err?.message.startsWith('REPLY_TOO_LARGE ')) throw tooLarge(err.message);
  if (err) throw err;
  // Buffer replies for one operation made every reply Buffers: the others read text, as ioredis gives it.
  if (!buffers) return replies as unknown[];
  return (replies as unknown[]).map((r, i) => (commands[i]?.buffers || r instanceof Error ? r : texts(r)));
}

/** The commands' indexes by Cluster hash slot, in order. */
function slotGroups(store: Store, commands: readonly Command[]): Map<number, number[]> {
  const groups = new Map<number, number[]>();
  commands.forEach((c, i) => {
    const slot = slotOf(store, c);
    const group = groups.get(slot);
    if (group) group.push(i);
    else groups.set(slot, [i]);
  });
  return groups;
}

/**
 * Runs many operations in one atomic script call (one per hash slot on a Cluster); outcomes in request order.
 * `all`: no operation runs unless every If-Match holds (one hash slot only, else 400).
 */
export async function runBatch(
  store: Store,
  ops: readonly Op[],
  all = false,
  idem?: Idempotency,
): Promise<BatchOutcome> {
  const commands: Command[] = [];
  for (const op of ops) for (const c of op.commands) commands.push(c);
  // One primary holds every key (standalone, Sentinel): one call; on a Cluster one per hash slot.
  const groups = store.redis instanceof Cluster ? slotGroups(store, commands) : undefined;
  if (all && groups && groups.size > 1) {
    throw new ApiError(
      'invalid_request',
      '"atomic": "all" needs every key of the batch in one Redis Cluster hash slot (an SVC_KEY_PREFIX with a hash tag)',
    );
  }
  const observer = observers.get(store.redis);
  const start = observer ? process.hrtime.bigint() : 0n;
  const run = (slot: number, group: readonly Command[]) =>
    exec(store, slot, group, all, idem).catch((err: Error) => {
      throw all ? refusedWhole(err, ops, group) : err;
    });
  let replies: unknown[];
  if (!groups) replies = await run(0, commands);
  else {
    replies = new Array(commands.length);
    await Promise.all(
      [...groups].map(async ([slot, indexes]) => {
        const groupReplies = await run(
          slot,
          indexes.map((i) => commands[i] as Command),
        );
        indexes.forEach((commandIndex, j) => {
          replies[commandIndex] = groupReplies[j];
        });
      }),
    );
  }
  // Each operation counts as the command it would be alone.
  observer?.(seconds(start), commands.length);
  const outcomes: (Outcome | ApiError)[] = [];
  let next = 0;
  for (const op of ops) {
    outcomes.push(settle(op, replies, next));
    next += op.commands.length;
  }
  // A read whose text answer may hold bytes that are not UTF-8 runs again with Buffer replies (ops/encoding.ts).
  const rereads: Promise<void>[] = [];
  outcomes.forEach((outcome, i) => {
    const reread = (ops[i] as Op).reread;
    if (outcome instanceof Reread && reread) {
      rereads.push(
        runOp(store, reread())
          .catch(toApiError)
          .then((again) => {
            outcomes[i] = again;
          }),
      );
    }
  });
  if (rereads.length > 0) await Promise.all(rereads);
  return { outcomes, atomic: !groups || groups.size <= 1 };
}
