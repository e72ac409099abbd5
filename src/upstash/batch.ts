// POST /upstash/pipeline (in order, not atomic) and POST /upstash/multi-exec (MULTI/EXEC on a connection of its own).
import calculateSlot from 'cluster-key-slot';
import { type ChainableCommander, Cluster } from 'ioredis';
import { failingOver, withDeadline } from '../engine/send';
import { ApiError, REDIS_RETRY_AFTER, toApiError } from '../errors';
import type { RedisClient, Reply, ScriptCommands } from '../redis/client';
import { boundedArgs, checkBudget, refusal, sizeKind } from './bounds';
import { appendEvents } from './events';
import type { Planned } from './plan';
import { confirm, type Item, isPlain, type Runner, runOne, runsApart, settle } from './run';

/**
 * Runs every command in order; each answers for itself. Plain commands (the usual pipeline) go as one ioredis
 * pipeline; on a Cluster (an ioredis pipeline must stay on one node) each command is sent as one call, together on
 * the shared connections (Redis runs them in order); one after the other when the order would not hold: a blocking
 * command (its own connection), a write that replicas confirm (the writer's connection) or a command the service
 * answers itself (a flush) among them.
 */
export async function runPipeline(runner: Runner, planned: Planned[]): Promise<Item[]> {
  const { store } = runner;
  await checkBudget(store, planned, runner.budget);
  if (!(store.redis instanceof Cluster) && planned.every((p) => isPlain(store, p)))
    return runTogether(runner, planned);
  const apart = planned.some((p) => runsApart(store, p));
  if (!apart) return Promise.all(planned.map((p) => runOne(runner, p).catch(asItem)));
  const items: Item[] = [];
  for (const p of planned) items.push(await runOne(runner, p).catch(asItem));
  return items;
}

/**
 * Plain commands (isPlain) as one ioredis pipeline under one deadline: one write to the connection, one promise to
 * wait on. checkBudget has already checked each command's count arguments (their sum is within the budget).
 */
async function runTogether(runner: Runner, planned: Planned[]): Promise<Item[]> {
  const { store } = runner;
  if (store.fence?.closed && planned.some((p) => p.writes)) throw failingOver();
  // The service's scripts are commands of the pipeline too (ioredis copies them onto it).
  const pipeline = upstashPipeline(store.redis);
  for (const p of planned) {
    if (sizeKind(p)) pipeline.upstashBounded(...(boundedArgs(p, 'run') as [number, ...string[]]));
    else pipeline.call(...(p.args as [string]));
  }
  const replies = (await withDeadline(pipeline.exec(), store.deadlineMs)) as Reply[];
  const items = planned.map((p, i): Item => {
    const reply = replies[i] as Reply;
    const refused = refusal(reply[0], runner.budget);
    return refused ? { error: refused.message } : settle(runner, p, reply);
  });
  if (store.changes)
    await Promise.all(
      planned.map((p, i) =>
        p.writes && 'result' in (items[i] as Item)
          ? appendEvents(store, p, (replies[i] as Reply)[1])
          : undefined,
      ),
    );
  return items;
}

type Scripts = { scriptsSet?: Record<string, unknown> };
const onlyBounded = new WeakMap<object, Record<string, unknown>>();

/**
 * An ioredis pipeline with the one script runTogether sends (upstashBounded): ioredis copies every script the
 * client defines onto each new pipeline, two properties each (about 35 scripts: 13 µs of CPU per /upstash pipeline,
 * issue 36). The client's script set is swapped for the call only (synchronous); without it, a plain pipeline.
 */
function upstashPipeline(redis: RedisClient): ChainableCommander & ScriptCommands {
  const client = redis as unknown as Scripts;
  const all = client.scriptsSet;
  if (!all?.upstashBounded) return redis.pipeline() as ChainableCommander & ScriptCommands;
  let one = onlyBounded.get(all);
  if (!one) {
    one = { upstashBounded: all.upstashBounded };
    onlyBounded.set(all, one);
  }
  client.scriptsSet = one;
  try {
    return redis.pipeline() as ChainableCommander & ScriptCommands;
  } finally {
    client.scriptsSet = all;
  }
}

/** A refusal of one command (403, 400) is that command's error; Redis away fails the whole request. */
function asItem(err: unknown): Item {
  const apiError = toApiError(err);
  if (apiError.status >= 500) throw apiError;
  return { error: apiError.message };
}

/** On a Cluster, one hash slot for every key (ioredis sends the transaction to the node serving it). */
function checkSlots(redis: RedisClient, planned: Planned[]): void {
  if (!(redis instanceof Cluster)) return;
  const slots = new Set(planned.flatMap((p) => p.keys.map((key) => calculateSlot(key))));
  if (slots.size > 1)
    throw new ApiError(
      'invalid_request',
      `CROSSSLOT Keys in request don't hash to the same slot: on Redis Cluster a transaction needs every key in one hash slot (${slots.size} here); give related keys a common hash tag such as {user1}:a, {user1}:b`,
    );
}

/**
 * MULTI ... EXEC of every command, atomically, on a pooled connection of its own (never shared with another
 * transaction, nor interleaved with other clients' commands). A command Redis refuses while queueing discards the
 * whole transaction (400 EXECABORT); one that fails while running answers its error, the others still apply.
 */
export async function runTransaction(runner: Runner, planned: Planned[]): Promise<Item[]> {
  const { store } = runner;
  checkSlots(store.redis, planned);
  // Sized just before MULTI: the commands then run as they are (a key growing in between is not re-checked).
  await checkBudget(store, planned, runner.budget);
  const writes = planned.some((p) => p.writes);
  for (const p of planned) {
    if (!p.exact)
      throw new ApiError('forbidden', `ERR '${p.name.toUpperCase()}' cannot run in a transaction here`);
    if ((p.name === 'flushdb' || p.name === 'flushall') && runner.prefix !== '')
      throw new ApiError('forbidden', 'ERR a flush under a prefix cannot run in a transaction');
  }
  if (writes && store.fence?.closed) throw failingOver();
  const { waiters } = store;
  if (!waiters)
    throw new ApiError('service_unavailable', 'Transactions are not available here', {
      retryAfter: REDIS_RETRY_AFTER,
    });
  const conn = await waiters.acquire(runner.client);
  let reusable = false;
  let replies: [Error | null, unknown][] | null;
  try {
    const multi = conn.multi();
    for (const p of planned) multi.call(...(p.args as [string]));
    replies = await multi.exec().catch((err: Error & { previousErrors?: Error[] }) => {
      if (err.name !== 'ReplyError' || !err.message.startsWith('EXECABORT')) throw err;
      reusable = true;
      const first = err.previousErrors?.[0]?.message;
      throw new ApiError('invalid_request', first ? `${err.message} (${first})` : err.message);
    });
    reusable = true;
    if (!replies) throw new ApiError('invalid_request', 'EXECABORT the transaction was aborted');
    if (writes) await confirm(store, conn, { writes }, [null, null]);
  } catch (err) {
    throw toApiError(err);
  } finally {
    waiters.release(conn, reusable, runner.client);
  }
  if (writes) runner.wrote();
  const items = planned.map((p, i): Item => {
    const [err, value] = (replies as [Error | null, unknown][])[i] ?? [null, null];
    return err ? { error: err.message } : { result: p.reply(value) };
  });
  await Promise.all(
    planned.map((p, i) => {
      const [err, value] = (replies as [Error | null, unknown][])[i] ?? [null, null];
      return p.writes && !err ? appendEvents(store, p, value) : undefined;
    }),
  );
  return items;
}
