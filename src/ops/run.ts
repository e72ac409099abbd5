// Runs operations against Redis: one alone (a route) or many in one script call (a batch); replies become outcomes.
import calculateSlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import { ApiError, toApiError } from '../errors';
import type { RedisClient, Reply } from '../redis/client';
import type { Keyspace } from '../redis/keys';
import type { Command, Op, Outcome } from './op';

type Invoke = (...args: (string | number)[]) => Promise<unknown>;

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

/** The one place where Redis error replies become API errors. */
function replyError(err: Error, command: Command): ApiError {
  const key = command.keys[0] ?? '';
  const [code, actual] = err.message.split(' ', 2);
  if (code === 'WRONGTYPE_OF') {
    return new ApiError('wrong_type', `Key '${key}' holds a ${actual}, not a ${command.args[0]}`, {
      details: { key, type: actual },
    });
  }
  if (code === 'WRONGTYPE') return new ApiError('wrong_type', `Key '${key}' holds another type of value`);
  if (code === 'KEY_EXISTS') return new ApiError('key_exists', `Key '${key}' already exists`);
  return toApiError(err);
}

function argv(keyspace: Keyspace, c: Command): (string | number)[] {
  return [...c.keys.map(keyspace.user), ...c.args];
}

function call(redis: RedisClient, keyspace: Keyspace, c: Command): Promise<unknown> {
  const fn = (redis as unknown as Record<string, Invoke>)[c.name];
  if (!fn) throw new Error(`unknown Redis command ${c.name}`);
  return fn.apply(redis, argv(keyspace, c));
}

/** One command's value or error, as a pipeline would answer it. */
function reply(redis: RedisClient, keyspace: Keyspace, c: Command): Promise<Reply> {
  return call(redis, keyspace, c).then(
    (value): Reply => [null, value],
    (err: Error): Reply => [err, null],
  );
}

/** Client errors (4xx) fail one operation; anything else (Redis down, a bug) fails the whole request. */
function settle(op: Op, replies: Reply[]): Outcome | ApiError {
  try {
    const values = replies.map(([err, value], i) => {
      if (err) throw replyError(err, op.commands[i] as Command);
      return value;
    });
    return op.result(values);
  } catch (err) {
    const apiError = toApiError(err);
    if (apiError.status >= 500) throw apiError;
    return apiError;
  }
}

/**
 * Runs one operation. One command goes out alone (auto-pipelining); several (set algebra reading many keys)
 * run as a batch, so that they see every key at the same moment (per hash slot on a Cluster).
 */
export async function runOp(redis: RedisClient, keyspace: Keyspace, op: Op): Promise<Outcome> {
  const [command] = op.commands;
  let outcome: Outcome | ApiError;
  if (op.commands.length === 1 && command) {
    const observer = observers.get(redis);
    const start = observer ? process.hrtime.bigint() : 0n;
    const replies = [await reply(redis, keyspace, command)];
    if (observer && answered(replies)) observer(seconds(start), 1);
    outcome = settle(op, replies);
  } else {
    outcome = (await runBatch(redis, keyspace, [op])).outcomes[0] as Outcome | ApiError;
  }
  if (outcome instanceof ApiError) throw outcome;
  return outcome;
}

export interface BatchOutcome {
  readonly outcomes: (Outcome | ApiError)[];
  /** False when the batch had to be split over several Redis Cluster slots. */
  readonly atomic: boolean;
}

/** How typed-batch-n names our two scripts. */
const BATCHED: Record<string, 'r' | 'w'> = { typedRead: 'r', typedWrite: 'w' };

/**
 * Runs commands in one typed-batch-n call: atomic like MULTI/EXEC around the same script calls, but one
 * command for Redis and ioredis instead of one per operation (ioredis's per-command cost dominated batches).
 * The operations' arguments travel as one JSON argument: ioredis handles every argument of a command on its own
 * (flattening, type checks, a separate write), about 1 µs each, while JSON.stringify is one native call. Each
 * argument is the string ioredis would have sent (lone UTF-16 surrogates become U+FFFD, as in UTF-8).
 */
async function exec(redis: RedisClient, keyspace: Keyspace, commands: Command[]): Promise<Reply[]> {
  const keys: string[] = [];
  const ops: string[][] = [];
  for (const c of commands) {
    const kind = BATCHED[c.name];
    if (!kind || c.keys.length !== 1) throw new Error(`${c.name} on ${c.keys.length} keys cannot be batched`);
    keys.push(keyspace.user(c.keys[0] as string));
    const op: string[] = [kind];
    for (const arg of c.args) op.push(String(arg).toWellFormed());
    ops.push(op);
  }
  const replies = await redis.typedBatch(keys.length, keys, [JSON.stringify(ops)]);
  return replies.map((r): Reply => (r instanceof Error ? [r, null] : [null, r]));
}

/** Runs many operations in one atomic script call (one per hash slot on a Cluster); outcomes in request order. */
export async function runBatch(
  redis: RedisClient,
  keyspace: Keyspace,
  ops: readonly Op[],
): Promise<BatchOutcome> {
  const commands = ops.flatMap((op) => op.commands);
  const groups = new Map<number, number[]>();
  if (redis instanceof Cluster) {
    commands.forEach((c, i) => {
      const slot = calculateSlot(keyspace.user(c.keys[0] ?? ''));
      const group = groups.get(slot);
      if (group) group.push(i);
      else groups.set(slot, [i]);
    });
  } else {
    groups.set(
      0,
      commands.map((_, i) => i),
    );
  }
  const replies: Reply[] = new Array(commands.length);
  const observer = observers.get(redis);
  const start = observer ? process.hrtime.bigint() : 0n;
  await Promise.all(
    [...groups.values()].map(async (indexes) => {
      const groupReplies = await exec(
        redis,
        keyspace,
        indexes.map((i) => commands[i] as Command),
      );
      indexes.forEach((commandIndex, j) => {
        replies[commandIndex] = groupReplies[j] as Reply;
      });
    }),
  );
  // Each operation counts as the command it would be alone.
  observer?.(seconds(start), commands.length);
  let next = 0;
  const outcomes = ops.map((op) => {
    const slice = replies.slice(next, next + op.commands.length);
    next += op.commands.length;
    return settle(op, slice);
  });
  return { outcomes, atomic: groups.size <= 1 };
}
