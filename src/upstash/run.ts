// Runs planned Upstash commands: one, a pipeline (in order, not atomic), or a transaction on a connection of its own.
import calculateSlot from 'cluster-key-slot';
import { Cluster, type Redis } from 'ioredis';
import { flush } from '../admin/redis';
import { boundedString } from '../engine/plain-reads';
import { sendScript, unconfirmed, withDeadline } from '../engine/send';
import { ApiError, commandRefused, REDIS_RETRY_AFTER, toApiError } from '../errors';
import { masterNodes, type RedisClient, type Reply } from '../redis/client';
import { createKeyspace, INTERNAL_PREFIX } from '../redis/keys';
import type { Store } from '../redis/store';
import {
  type Budget,
  boundedArgs,
  checkArguments,
  checkBudget,
  refusal,
  sizedApart,
  sizeKind,
} from './bounds';
import { appendEvents } from './events';
import { type Planned, unknownCommand } from './plan';

/** What a command comes back as in Upstash's answers. */
export type Item = { result: unknown } | { error: string };

export interface Runner {
  readonly store: Store;
  /** SVC_KEY_PREFIX followed by the credential's prefix. */
  readonly prefix: string;
  /** The longest wait of a blocking command, in seconds (SVC_LIST_MAX_WAIT). */
  readonly maxWait: number;
  /** Told of every write that reached Redis (the sync token changes). */
  readonly wrote: () => void;
  /** Who holds pooled connections (SVC_LIST_MAX_WAITERS_PER_CLIENT): a credential, or an address. */
  readonly client: string;
  /** What one request may read (SVC_MAX_REPLY_ELEMENTS / _BYTES). */
  readonly budget: Budget;
}

/**
 * A command's reply as its item: a Redis error reply is the command's own answer; anything else (Redis away, a
 * timeout) fails the request. A write that succeeded is noted (the sync token changes).
 */
export function settle(runner: Runner, planned: Planned, [err, value]: Reply): Item {
  if (err) {
    if (err.name !== 'ReplyError' || toApiError(err).status === 503) throw toApiError(err);
    // A command renamed away (a managed Redis) that ran inside a bounded-read script: Redis's own words for it.
    if (/^ERR Unknown (Redis )?command called from script/i.test(err.message))
      return { error: unknownCommand(planned.args.slice(0, 1)).message };
    return { error: err.message };
  }
  if (planned.writes) runner.wrote();
  return { result: planned.reply(value) };
}

const isCluster = (store: Store) => store.redis instanceof Cluster;

/** Runs one command on the shared connection (writes through the durable writer when replicas must confirm). */
export async function runOne(runner: Runner, planned: Planned, abandoned?: AbortSignal): Promise<Item> {
  const item = await runCommand(runner, planned, abandoned);
  return planned.withTypes && 'result' in item ? withTypes(runner, item.result) : item;
}

/** SCAN's keys each followed by its type, as Upstash answers `SCAN ... WITHTYPE`. */
async function withTypes(runner: Runner, result: unknown): Promise<Item> {
  const [cursor, keys] = result as [string, string[]];
  const types = await Promise.all(
    keys.map((key) => withDeadline(runner.store.redis.type(runner.prefix + key), runner.store.deadlineMs)),
  );
  return { result: [cursor, keys.flatMap((key, i) => [key, types[i] as string])] };
}

async function runCommand(runner: Runner, planned: Planned, abandoned?: AbortSignal): Promise<Item> {
  const { store } = runner;
  await vouchForKeys(store, planned);
  // Bounded reads are checked inside their own script call below; KEYS on a Cluster and argument counts here.
  // Nothing is awaited for other commands: a pipeline's commands must reach the connection in their order.
  const kind = sizeKind(planned);
  checkArguments(planned, runner.budget);
  const apart = kind !== undefined && (isSpecial(store, planned) || sizedApart(planned));
  if (apart) await checkBudget(store, [planned], runner.budget);
  const special = await runSpecial(runner, planned);
  if (special) return special;
  if (isCluster(store) && new Set(planned.keys.map((key) => calculateSlot(key))).size > 1)
    return { error: "CROSSSLOT Keys in request don't hash to the same slot" };
  let reply: [Error | null, unknown];
  const wait = planned.blocking ? blockingWait(planned, runner.maxWait) : undefined;
  if (wait !== undefined) {
    reply = await runBlocking(runner, planned, wait, abandoned);
  } else {
    const slot = isCluster(store) && planned.keys[0] ? calculateSlot(planned.keys[0]) : 0;
    reply =
      kind && !apart
        ? (planned.name === 'get' && (await plainGet(runner, planned))) ||
          (await sendScript(store, slot, 'upstashBounded', () => boundedArgs(planned, 'run'), false))
        : await sendScript(store, slot, 'call', () => planned.args, planned.writes);
    const refused = refusal(reply[0], runner.budget);
    if (refused) throw refused;
  }
  const item = settle(runner, planned, reply);
  if (planned.writes && 'result' in item) await appendEvents(store, planned, reply[1]);
  return item;
}

/**
 * GET without a script (issue 36): GETRANGE capped at the budget (engine/plain-reads.ts), EXISTS only after an empty
 * reply; undefined for an empty string, which the script tells from a missing key.
 */
async function plainGet({ store, budget }: Runner, planned: Planned): Promise<Reply | undefined> {
  const read = await boundedString(store, planned.keys[0] as string, budget.bytes, false, false);
  if (!read) return undefined;
  return 'reply' in read ? read.reply : [null, read.value];
}

/**
 * Whether `planned` cannot run beside the others of a pipeline on the shared connection, in order: a blocking
 * command (its own connection), one without exact key specs (checked first), a command the service answers
 * itself, a bounded read sent apart, or a write that replicas confirm (the writer's connection).
 */
export function runsApart(store: Store, planned: Planned): boolean {
  return (
    planned.blocking ||
    !planned.exact ||
    isSpecial(store, planned) ||
    sizedApart(planned) ||
    (store.durable !== undefined && planned.writes)
  );
}

/**
 * Whether `planned` is one call and nothing more (a plain command, or a bounded read inside its script), so that a
 * pipeline of such commands can go to Redis as one ioredis pipeline.
 */
export function isPlain(store: Store, planned: Planned): boolean {
  return !runsApart(store, planned) && !planned.withTypes && planned.name !== 'randomkey';
}

/**
 * Without exact key specs (SORT ... STORE), COMMAND GETKEYS must show that no internal key is named; where the
 * server refuses COMMAND (a managed Redis), such a command is refused too (501), never run unchecked.
 */
async function vouchForKeys(store: Store, planned: Planned): Promise<void> {
  if (planned.exact) return;
  const keys = (await store.redis.call('COMMAND', 'GETKEYS', ...planned.args).catch((err: Error) => {
    const refused = commandRefused(err, 'COMMAND GETKEYS');
    if (refused) throw refused;
    return [];
  })) as string[];
  if (keys.some((key) => key.startsWith(INTERNAL_PREFIX)))
    throw new ApiError('forbidden', 'ERR a key of this command is reserved for the service');
}

/** Whether the service answers `planned` itself (see runSpecial), in more than one round trip. */
export function isSpecial(store: Store, planned: Planned): boolean {
  const { name } = planned;
  if (name === 'flushdb' || name === 'flushall') return true;
  return isCluster(store) && (name === 'keys' || name === 'dbsize' || name === 'scan');
}

/** Commands answered by the service itself: flushes under a prefix, and those that span a Cluster's masters. */
async function runSpecial(runner: Runner, planned: Planned): Promise<Item | undefined> {
  const { store } = runner;
  const top = planned.name;
  if (top === 'flushdb' || top === 'flushall') {
    const { changes, streams } = store;
    await flush(store.redis, createKeyspace(runner.prefix), changes && { ...changes, streams });
    runner.wrote();
    return { result: 'OK' };
  }
  if (top === 'randomkey') return { result: await randomKey(store, planned) };
  if (!isCluster(store)) return undefined;
  const nodes = masterNodes(store.redis);
  const onEach = () =>
    Promise.all(
      nodes.map((node) => withDeadline(node.call(...(planned.args as [string])), store.deadlineMs)),
    );
  if (top === 'keys') return { result: planned.reply((await onEach()).flat()) };
  if (top === 'dbsize') return { result: (await onEach()).reduce((a: number, b) => a + Number(b), 0) };
  if (top === 'scan') return { result: planned.reply(await scanCluster(store, nodes, planned.args)) };
  return undefined;
}

/** RANDOMKEY (allowed without a prefix only) asked again when it picks an internal key; null after a few tries. */
async function randomKey(store: Store, planned: Planned): Promise<unknown> {
  for (let i = 0; i < RANDOMKEY_TRIES; i++) {
    const picked = await withDeadline(store.redis.randomkey(), store.deadlineMs);
    // An empty database; else a user key, or an internal one (the reply filter makes it null): try again.
    if (picked === null || planned.reply(picked) !== null) return picked;
  }
  return null;
}
const RANDOMKEY_TRIES = 8;

/**
 * SCAN over every master of a Cluster: the cursor '<master>-<cursor>' names the master being walked (the masters in
 * masterNodes' stable order); '0' starts and ends the walk.
 */
async function scanCluster(store: Store, nodes: Redis[], args: string[]): Promise<unknown> {
  const [, cursorText = '0', ...options] = args;
  const m = /^(?:(\d{1,4})-)?(\d{1,20})$/.exec(cursorText);
  if (!m) throw new ApiError('invalid_request', 'ERR invalid cursor');
  let node = Number(m[1] ?? 0);
  const node0 = nodes[node];
  if (!node0) throw new ApiError('invalid_request', 'ERR invalid cursor');
  const [next, keys] = (await withDeadline(
    node0.call('SCAN', m[2] as string, ...options),
    store.deadlineMs,
  )) as [string, string[]];
  const cursor = next;
  if (cursor === '0') {
    node++;
    if (node >= nodes.length) return ['0', keys];
  }
  return [`${node}-${cursor}`, keys];
}

/** The seconds a blocking command waits (its timeout capped at SVC_LIST_MAX_WAIT), or undefined when it does not. */
function blockingWait(planned: Planned, max: number): number | undefined {
  const { args } = planned;
  const name = planned.name;
  let index: number;
  let scale = 1;
  if (name === 'xread' || name === 'xreadgroup') {
    index = args.findIndex((a, i) => i > 0 && a.toLowerCase() === 'block') + 1;
    if (index === 0) return undefined;
    scale = 1000;
  } else if (name === 'blmpop' || name === 'bzmpop') index = 1;
  else index = args.length - 1;
  const value = Number(args[index]);
  // Redis refuses a malformed timeout itself, at once.
  if (!Number.isFinite(value) || value < 0) return 0;
  const seconds = value === 0 || value / scale > max ? max : value / scale;
  args[index] = String(seconds * scale);
  return seconds;
}

/** A blocking command on a pooled connection of its own (as a list pop's `wait`), with the same cap. */
async function runBlocking(
  runner: Runner,
  planned: Planned,
  seconds: number,
  abandoned?: AbortSignal,
): Promise<[Error | null, unknown]> {
  const { store } = runner;
  const { waiters } = store;
  if (!waiters)
    throw new ApiError('service_unavailable', 'Blocking commands are not available here', {
      retryAfter: REDIS_RETRY_AFTER,
    });
  if (planned.writes && store.fence?.closed)
    throw new ApiError('service_unavailable', 'The data store is failing over; retry shortly', {
      retryAfter: REDIS_RETRY_AFTER,
    });
  const conn = await waiters.acquire(runner.client);
  let reusable = false;
  const leave = () => waiters.drop(conn);
  abandoned?.addEventListener('abort', leave, { once: true });
  try {
    const reply = await withDeadline(
      conn.call(...(planned.args as [string])),
      seconds * 1000 + store.deadlineMs,
    ).then(
      (value): [Error | null, unknown] => [null, value],
      (err: Error): [Error | null, unknown] => [err, null],
    );
    reusable = reply[0] === null || reply[0].name === 'ReplyError';
    await confirm(store, conn, planned, reply);
    return reply;
  } finally {
    abandoned?.removeEventListener('abort', leave);
    waiters.release(conn, reusable && !abandoned?.aborted, runner.client);
  }
}

/** With SVC_REDIS_WAIT_REPLICAS: WAIT on the connection that wrote (not on a Cluster: see ops/run.ts). */
export async function confirm(
  store: Store,
  conn: RedisClient,
  planned: Planned | { writes: boolean },
  reply: [Error | null, unknown],
): Promise<void> {
  const { durable } = store;
  if (!durable || !planned.writes || reply[0] !== null || conn instanceof Cluster) return;
  const confirmed = await withDeadline(
    conn.call('WAIT', durable.replicas, durable.waitTimeoutMs),
    durable.deadlineMs,
  ).catch(() => 0);
  if (Number(confirmed) < durable.replicas) throw unconfirmed(durable);
}
