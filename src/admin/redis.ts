// Redis-side work of the admin endpoints: PING and INFO memory, one key's memory record, flush, connections.
import { Cluster, type Redis } from 'ioredis';
import { ApiError, commandRefused, toApiError } from '../errors';
import { eventArgs } from '../redis/change-event';
import { masterNodes, type RedisClient } from '../redis/client';
import type { ClusterStreams } from '../redis/feed-streams';
import type { Keyspace } from '../redis/keys';

export interface MemoryFigures {
  used: number;
  available: number;
  total: number;
}

const infoField = (info: string, name: string): number => {
  const match = new RegExp(`^${name}:(\\d+)`, 'm').exec(info);
  return match ? Number(match[1]) : 0;
};

/** `INFO memory` -> bytes: total is maxmemory, or the host's memory when none is set (0 when neither is known). */
export function parseMemory(info: string): MemoryFigures {
  const used = infoField(info, 'used_memory');
  const total = infoField(info, 'maxmemory') || infoField(info, 'total_system_memory');
  return { used, total, available: Math.max(0, total - used) };
}

export interface Probe {
  /** PING round trip in milliseconds; null when Redis did not answer. */
  latency: number | null;
  memory: MemoryFigures | null;
  /** Why `memory` is null while Redis answers: INFO refused (a managed Redis), or its error. */
  memoryUnavailable?: string;
}

/**
 * PING with its round trip (on a Cluster, of every master: one that does not answer leaves its slots unserved),
 * then INFO memory (on a Cluster, of whichever node answers). Never throws.
 */
export async function probe(redis: RedisClient): Promise<Probe> {
  const start = process.hrtime.bigint();
  try {
    if (redis instanceof Cluster) await pingMasters(redis);
    else await redis.ping();
  } catch {
    return { latency: null, memory: null };
  }
  const latency = Number((Number(process.hrtime.bigint() - start) / 1e6).toFixed(3));
  return redis.info('memory').then(
    (info) => ({ latency, memory: parseMemory(info) }),
    (err: Error) => ({
      latency,
      memory: null,
      memoryUnavailable: commandRefused(err, 'INFO')?.message ?? `INFO failed: ${err.message}`,
    }),
  );
}

const SLOTS = 16384;

/**
 * Pings every master of the slot map. ioredis drops a node it lost from its pool, so its slots' owner must be
 * checked too: a master that owns slots and is not connected means those slots are not served.
 */
async function pingMasters(cluster: Cluster): Promise<void> {
  const masters = cluster.nodes('master');
  const connected = new Set(masters.map(({ options }) => `${options.host}:${options.port}`));
  // A sparse array: map() would skip the slots nobody serves.
  for (let slot = 0; slot < SLOTS; slot++) {
    const owner = cluster.slots[slot]?.[0];
    if (!owner || !connected.has(owner)) throw new Error(`slot ${slot} is not served`);
  }
  await Promise.all(masters.map((node) => node.ping()));
}

export interface KeyRecord {
  type: string;
  size: number;
  ttl: number;
  /** Seconds since the last access; null under an LFU maxmemory-policy, where Redis does not track it. */
  idleSeconds: number | null;
}

/** TYPE, MEMORY USAGE, OBJECT IDLETIME and TTL in one round trip (none of them touches the key); null if missing. */
export async function keyRecord(redis: RedisClient, redisKey: string): Promise<KeyRecord | null> {
  const [type, size, idleSeconds, ttl] = await Promise.all([
    redis.type(redisKey),
    redis.memory('USAGE', redisKey).catch((err: Error) => {
      throw commandRefused(err, 'MEMORY USAGE') ?? err;
    }),
    redis.object('IDLETIME', redisKey).catch((err: Error) => {
      if (err.name === 'ReplyError') return null;
      throw err;
    }),
    redis.ttl(redisKey),
  ]);
  if (type === 'none' || size === null || ttl === -2) return null;
  return { type, size, ttl, idleSeconds: idleSeconds as number | null };
}

/**
 * Redis refused a command of the flush: unavailability (READONLY, LOADING, a lost connection, ...) stays a 503
 * as everywhere; any other refusal (a renamed or ACL-denied command) does not go away by retrying: a 500 that
 * names the command and says how far the flush got.
 */
function refused(command: string, err: Error, removed: number): ApiError {
  const apiError = toApiError(err);
  if (apiError.type === 'service_unavailable') return apiError;
  const code = err.message.split(' ', 1)[0];
  const progress = removed > 0 ? `; ${removed} keys were removed before it` : '; nothing was removed';
  const type = commandRefused(err) ? 'command_refused' : 'server_error';
  return new ApiError(type, `Flush incomplete: Redis refused ${command} (${code})${progress}`, {
    cause: err,
  });
}

/** The change feed's stream and retention, when it is on: a flush leaves a `flush` event there. */
export interface FlushFeed {
  readonly key: string;
  readonly maxlen: number;
  /** On a Cluster: each master's own stream, where its flush event goes. */
  readonly streams?: ClusterStreams;
}

/** The feed of one master: on a Cluster its own stream. */
function nodeFeed(feed: FlushFeed | undefined, node: Redis): FlushFeed | undefined {
  if (!feed?.streams) return feed;
  return { ...feed, key: feed.streams.forNode(`${node.options.host}:${node.options.port}`) };
}

/** XADD of the `flush` event (no key, no type): every subscriber, tenants included, must re-read its keys. */
const flushEvent = (feed: FlushFeed) =>
  [feed.key, ...eventArgs(feed.maxlen, { key: '', type: '', op: 'flush' })] as const;

/**
 * DBSIZE and FLUSHDB ASYNC in one MULTI, so the count is exactly what was flushed; with the feed on, the `flush`
 * event in the same MULTI: the stream is dropped with the data and starts again with that event.
 */
async function flushNode(node: Redis, feed?: FlushFeed): Promise<number> {
  let replies: [Error | null, unknown][] | null;
  try {
    const multi = node.multi().dbsize().flushdb('ASYNC');
    if (feed) multi.xadd(...flushEvent(feed));
    replies = await multi.exec();
  } catch (err) {
    // EXECABORT: a command was refused as it was queued (unknown, denied); the reason is in previousErrors.
    const first = (err as { previousErrors?: Error[] }).previousErrors?.[0];
    throw refused('FLUSHDB', first ?? (err as Error), 0);
  }
  if (!replies) throw refused('FLUSHDB', new Error('MULTI was aborted'), 0);
  const [[countErr, count] = [null, 0], [flushErr] = [null]] = replies;
  if (countErr) throw refused('DBSIZE', countErr, 0);
  if (flushErr) throw refused('FLUSHDB', flushErr, 0);
  return count as number;
}

/**
 * SCAN + UNLINK of the keys matching `pattern`, one UNLINK per SCAN page; on a Cluster one per key (the keys of a
 * node span slots). The first refused UNLINK stops the flush with what was removed until then.
 */
async function unlinkMatching(node: Redis, pattern: string, perKey: boolean): Promise<number> {
  let removed = 0;
  for await (const keys of node.scanStream({ match: pattern, count: 1000 }) as AsyncIterable<string[]>) {
    if (keys.length === 0) continue;
    const pipeline = node.pipeline();
    for (const batch of perKey ? keys.map((key) => [key]) : [keys]) pipeline.unlink(...batch);
    let failure: Error | undefined;
    for (const [err, n] of (await pipeline.exec()) ?? []) {
      if (err) failure ??= err;
      else removed += n as number;
    }
    if (failure) throw refused('UNLINK', failure, removed);
  }
  return removed;
}

/**
 * Removes the user data: the whole database (FLUSHDB ASYNC) without a key prefix, else only the keys under
 * it (internal `#svc:` keys never match a prefix). Returns the number of keys removed; throws an ApiError when
 * Redis refused any part of it.
 */
export async function flush(redis: RedisClient, keyspace: Keyspace, feed?: FlushFeed): Promise<number> {
  const cluster = redis instanceof Cluster;
  const counts = await Promise.all(
    masterNodes(redis).map((node) =>
      keyspace.prefix
        ? Promise.all([
            unlinkMatching(node, keyspace.userPattern, cluster),
            // The queues under the prefix are user data too (their keys are internal: #svc:q:{<prefix>...}).
            unlinkMatching(node, keyspace.queueKeys, cluster),
          ]).then(([a, b]) => a + b)
        : flushNode(node, nodeFeed(feed, node)),
    ),
  );
  // Under a prefix the streams stay (internal keys never match it): the event follows the last UNLINK.
  const keys = feed?.streams ? feed.streams.all() : feed ? [feed.key] : [];
  if (feed && keyspace.prefix)
    await Promise.all(keys.map((key) => redis.xadd(...flushEvent({ ...feed, key })))).catch((err) => {
      throw refused(
        'XADD',
        err,
        counts.reduce((a, b) => a + b, 0),
      );
    });
  return counts.reduce((a, b) => a + b, 0);
}

/**
 * The service keeps one multiplexed (pipelined) connection per Redis node and shares it between all
 * requests: `max` is the number of those connections, `active` those open and ready, `idle` always 0.
 */
export function connectionPool(redis: RedisClient): { active: number; idle: number; max: number } {
  const nodes = redis instanceof Cluster ? redis.nodes() : [redis];
  return { active: nodes.filter((n) => n.status === 'ready').length, idle: 0, max: nodes.length };
}
