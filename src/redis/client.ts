// Creates the ioredis clients (standalone, Sentinel or Cluster) with explicit options and our Lua scripts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import Redis, { Cluster, type RedisOptions } from 'ioredis';
import type { Config } from '../config';
import { LUA_CHANGED } from './change-event';
import { createKeyspace } from './keys';
import { tlsOptions } from './tls';

export type RedisMode = 'standalone' | 'sentinel' | 'cluster';

/** A value or an error, as ioredis pipelines answer. */
export type Reply = [Error | null, unknown];

export interface ScriptCommands {
  typedRead(key: string, ...argv: (string | number)[]): Promise<[unknown, number] | null>;
  typedWrite(key: string, ...argv: (string | number)[]): Promise<[number, unknown, number] | null>;
  typedIncr(key: string, ...argv: (string | number)[]): Promise<[number, number, string, number]>;
  /** One of the three above under an If-Match precondition: [its reply, the key's ETag or null]. */
  typedEtag(key: string, ...argv: (string | number)[]): Promise<[unknown, string | null]>;
  /** The keys (one per operation), then one JSON array: per operation 'r', 'w', 'i' or 'e' and its arguments;
   * then optionally 'all' (every If-Match must hold before anything runs). */
  typedBatch(numberOfKeys: number, keys: string[], argv: [string] | [string, 'all']): Promise<unknown[]>;
  /** Adds `by` hits to a rate-limit counter with a window of `windowMs`: [hits, ms left in the window]. */
  /** DEL of a key of any type with its change event: 1 when it existed. */
  keyDelete(key: string): Promise<number>;
  rateLimitIncrement(key: string, by: number, windowMs: number): Promise<[number, number]>;
  /** Claims an Idempotency-Key's record (idempotent-claim-1.lua); Buffer replies keep a recorded value's bytes. */
  idempotentClaimBuffer(
    record: string,
    token: string,
    fingerprint: string,
    lockMs: number,
  ): Promise<Buffer[]>;
  /** Releases a claim, or records an outcome under it (idempotent-settle-1.lua): 1 when the token still held it. */
  idempotentSettle(record: string, token: string, ...outcome: (string | Buffer | number)[]): Promise<number>;
  /** An /upstash read checked against the reply budget first: key count, keys, kind, 'run' | 'size', the command. */
  upstashBounded(numberOfKeys: number, ...args: string[]): Promise<unknown>;
}

export type RedisClient = (Redis | Cluster) & ScriptCommands;

const source = (file: string) => readFileSync(join(__dirname, 'scripts', file), 'utf8');
const TYPED = `${LUA_CHANGED}\n${source('typed.lua')}`;

/**
 * The first lines of every typed script: the change feed's settings for typed.lua's `changed` (false when off, so
 * that a write then costs one table lookup more). Built from the config, so no script takes extra arguments, except
 * on a Cluster: there each master has its own stream (feed-streams.ts), which the caller appends as the last
 * argument. The script takes it off ARGV and, before anything else, checks that the stream is on this node: Redis
 * refuses a script's access to a key of another node only when the script makes it, so an XADD refused after the
 * write would leave a write without its event. The scripts have no shebang: Redis 7 runs them in its compatibility
 * mode, which lets a script reach undeclared keys of other slots held by the same node (as the flag
 * allow-cross-slot-keys does); a declared key of another slot would be refused (CROSSSLOT) before the script runs.
 */
function feedHeader(config: Config): string {
  const { enabled, maxlen } = config.changes;
  if (!enabled) return 'local FEED = false';
  const { changes, prefix } = createKeyspace(config.keyPrefix);
  const strip = Buffer.byteLength(prefix);
  if (redisMode(config) !== 'cluster')
    return `local FEED = {key = '${changes}', maxlen = ${maxlen}, strip = ${strip}}`;
  return [
    `local FEED = {key = table.remove(ARGV), maxlen = ${maxlen}, strip = ${strip}}`,
    `local feed_here = redis.pcall('EXISTS', FEED.key)`,
    `if type(feed_here) == 'table' and feed_here.err then return redis.error_reply('FEED_ELSEWHERE ' .. FEED.key) end`,
  ].join('\n');
}

/** Scripts that may write, and so append an event: on a Cluster with the feed on, each call ends with its stream. */
export const FEED_SCRIPTS: ReadonlySet<string> = new Set([
  'typedWrite',
  'typedIncr',
  'typedEtag',
  'typedBatch',
  'keyDelete',
  'idempotent',
]);

/** Every writing script's body as a function of (KEYS, ARGV), by its ioredis name: what idempotent-n.lua runs. */
function innerScripts(): string {
  const bodies: Record<string, string> = {
    typedWrite: source('typed-write-1.lua'),
    typedIncr: source('typed-incr-1.lua'),
    typedEtag: source('typed-etag-1.lua'),
    typedBatch: source('typed-batch-n.lua'),
    keyDelete: source('key-delete-1.lua'),
    // A plain DEL (DELETE /store/keys/{key} with the feed off) does what key-delete-1 does, without the event.
    del: source('key-delete-1.lua'),
  };
  const entries = Object.entries(bodies).map(
    ([name, body]) => `${name} = function(KEYS, ARGV)\n${body}\nend,`,
  );
  return `local INNER = {\n${entries.join('\n')}\n}`;
}

/** A whole (unpaged) hash or set read takes at most this many elements; above it, `cursor`/`limit` pages. */
export const UNPAGED_MAX = 1000;

/** typed.lua's reply budget of one script call (docs/security.md): SVC_MAX_REPLY_ELEMENTS / _BYTES. */
function budgetHeader(config: Config): string {
  const { maxReplyElements, maxReplyBytes } = config.limits;
  return `local BUDGET = {elements = ${maxReplyElements}, bytes = ${maxReplyBytes}, unpaged = ${UNPAGED_MAX}}`;
}

/** Each script is the feed and budget headers, the shared library (typed.lua), then its own body. */
function scripts(config: Config) {
  const header = `${feedHeader(config)}\n${budgetHeader(config)}`;
  const script = (file: string) => `${header}\n${TYPED}\n${source(file)}`;
  return {
    // A read appends no event: no feed header, no stream argument.
    typedRead: {
      lua: `local FEED = false\n${budgetHeader(config)}\n${TYPED}\n${source('typed-read-1.lua')}`,
      numberOfKeys: 1,
    },
    typedWrite: { lua: script('typed-write-1.lua'), numberOfKeys: 1 },
    typedIncr: { lua: script('typed-incr-1.lua'), numberOfKeys: 1 },
    typedEtag: { lua: script('typed-etag-1.lua'), numberOfKeys: 1 },
    // The key count comes first in each call.
    typedBatch: { lua: script('typed-batch-n.lua') },
    keyDelete: { lua: script('key-delete-1.lua'), numberOfKeys: 1 },
    rateLimitIncrement: { lua: source('rate-limit-increment-1.lua'), numberOfKeys: 1 },
    // A writing script under an Idempotency-Key: the record, then the inner script's keys (the count comes first).
    idempotent: { lua: `${header}\n${TYPED}\n${innerScripts()}\n${source('idempotent-n.lua')}` },
    idempotentClaim: { lua: source('idempotent-claim-1.lua'), numberOfKeys: 1 },
    idempotentSettle: { lua: source('idempotent-settle-1.lua'), numberOfKeys: 1 },
    // The key count comes first in each call.
    upstashBounded: { lua: `${budgetHeader(config)}\n${source('upstash-bounded-n.lua')}` },
  };
}

export function redisMode(config: Config): RedisMode {
  if (config.redis.clusterNodes) return 'cluster';
  return config.redis.sentinels ? 'sentinel' : 'standalone';
}

/** Reconnects on a READONLY reply, at most once a second: writes keep coming, and reads need the connection too. */
function reconnectOnReadonly(): (err: Error) => boolean {
  let last = 0;
  return (err) => {
    if (!err.message.startsWith('READONLY') || Date.now() - last < 1000) return false;
    last = Date.now();
    return true;
  };
}

/**
 * Options chosen so that a dead or slow Redis gives a fast 503 instead of a queue of retries:
 * no offline queue, one attempt per command, a command timeout, and endless reconnects in the background.
 */
function baseOptions(config: Config): RedisOptions {
  const SCRIPTS = scripts(config);
  return {
    // One node's connection pipelines a turn's commands itself, in one write (writeTogether); see createRedis for a
    // Cluster.
    enableAutoPipelining: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: config.redis.commandTimeoutMs,
    connectTimeout: config.redis.connectTimeoutMs,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
    // A primary demoted behind a stable address (a managed Redis's failover) answers writes with READONLY:
    // reconnect, so that the address (DNS, Sentinel) is looked up again and writes reach the new primary.
    reconnectOnError: reconnectOnReadonly(),
    scripts: SCRIPTS,
    lazyConnect: true,
  };
}

export function createRedis(config: Config): RedisClient {
  const tls = tlsOptions(config);
  const options = { ...baseOptions(config), ...(tls ? { tls } : {}) };
  const { clusterNodes, sentinels, sentinelName, url } = config.redis;
  if (clusterNodes) {
    const { retryStrategy: _r, enableOfflineQueue: _o, ...redisOptions } = options;
    const credentials = new URL(url);
    return new Cluster([...clusterNodes], {
      scripts: options.scripts,
      enableAutoPipelining: true,
      // Auto-pipelining groups commands by the slot of their first argument: typedBatch's is its key count.
      autoPipeliningIgnoredCommands: ['typedBatch', 'idempotent', 'upstashBounded'],
      enableOfflineQueue: false,
      lazyConnect: true,
      clusterRetryStrategy: (attempt) => Math.min(attempt * 100, 1000),
      // Under TLS, seed nodes given by name are connected to by that name, which their certificates hold.
      ...(tls
        ? { dnsLookup: (address: string, done: (err: null, a: string) => void) => done(null, address) }
        : {}),
      redisOptions: {
        ...redisOptions,
        // The node connections' own calls (a master's DBSIZE, /upstash commands sent to one node) auto-pipeline.
        enableAutoPipelining: true,
        username: decodeURIComponent(credentials.username) || undefined,
        password: decodeURIComponent(credentials.password) || undefined,
      },
    }) as RedisClient;
  }
  if (sentinels) {
    const credentials = new URL(url);
    const redis = new Redis({
      ...options,
      sentinels: [...sentinels],
      name: sentinelName,
      username: decodeURIComponent(credentials.username) || undefined,
      password: decodeURIComponent(credentials.password) || undefined,
      sentinelRetryStrategy: (attempt) => Math.min(attempt * 100, 1000),
      // TLS to the Sentinels and to the data nodes they name alike.
      ...(tls ? { sentinelTLS: tls, enableTLSForSentinelMode: true } : {}),
      // Leave a demoted master as soon as the Sentinels announce +switch-master, not when it refuses a write.
      failoverDetector: true,
    });
    return writeTogether(redis) as RedisClient;
  }
  return writeTogether(new Redis(url, options)) as RedisClient;
}

/**
 * The service's automatic pipelining on one connection (DESIGN.md: one client, auto-pipelining), done here rather
 * than by ioredis's option: the commands one turn of the event loop sends on `redis` leave in one write. The first
 * command of a turn corks the socket, which is uncorked (one writev) once the turn's I/O callbacks have run.
 * ioredis's option does the same with a Pipeline object per turn (three properties per script we define, a promise,
 * a callback per reply) and lets only one such pipeline wait on Redis at a time; here each command takes ioredis's
 * plain path and goes out in the turn it was sent. Measured (docs/performance.md): GET -11 %, POST -13 %, batch
 * -11 % CPU per request under 50 connections, -17 % at one. Commands sent before the connection is ready (its own
 * handshake) are not held.
 */
function writeTogether(redis: Redis): Redis {
  const send = redis.sendCommand.bind(redis);
  let corked: Writable | undefined;
  const uncork = () => {
    const socket = corked;
    corked = undefined;
    socket?.uncork();
  };
  redis.sendCommand = (command, stream) => {
    const socket = (redis as unknown as { stream?: Writable }).stream;
    if (corked === undefined && stream === undefined && socket && redis.status === 'ready') {
      socket.cork();
      corked = socket;
      setImmediate(uncork);
    }
    return send(command, stream);
  };
  return redis;
}

/**
 * A second connection like `redis` (same node or Cluster, options and scripts), for writes that wait for replicas
 * (see durable.ts). Connect it like the first.
 */
export function writerConnection(redis: RedisClient): RedisClient {
  return duplicate(redis, {});
}

/**
 * A copy of `redis` with some options changed, and a READONLY throttle of its own: ioredis copies options, so
 * every duplicate would otherwise share the first one's, and the busiest connection would take every reconnect.
 */
export function duplicate(redis: RedisClient, options: RedisOptions): RedisClient {
  const own = { ...options, reconnectOnError: reconnectOnReadonly() };
  if (!(redis instanceof Cluster)) return writeTogether(redis.duplicate(own)) as RedisClient;
  return redis.duplicate([], { redisOptions: { ...redis.options.redisOptions, ...own } }) as RedisClient;
}

/** Added to the XREAD BLOCK time for the feed reader's command timeout (see feed/hub.ts). */
const FEED_READ_SLACK_MS = 5_000;

/** The change feed's reader: its XREAD blocks for up to BLOCK_MS, so its command timeout covers that. */
export function feedConnection(redis: RedisClient, blockMs = 5_000): RedisClient {
  return duplicate(redis, { commandTimeout: blockMs + FEED_READ_SLACK_MS, enableAutoPipelining: false });
}

/**
 * How long a rate-limit counter may take before the request goes ahead uncounted: without it a hung Redis would
 * hold each request for a whole data-command timeout before the data call even starts.
 */
export const LIMITER_COMMAND_TIMEOUT_MS = 250;

/**
 * The rate limiter's own connection: the data connection's settings with the limiter's command timeout. On a
 * Cluster ioredis runs one auto-pipeline at a time per connection, so on a hung Redis a counter sharing the data
 * connection would hold the data command back for a whole command timeout; and a connection's replies come in
 * order, so a counter stuck behind slow data commands would hold the request back.
 */
export function limiterConnection(redis: RedisClient): RedisClient {
  return duplicate(redis, { commandTimeout: LIMITER_COMMAND_TIMEOUT_MS });
}

/**
 * The primaries that hold the data: the one connection, or every Cluster master in a stable order (by address),
 * so that an index into the list means the same node from one request to the next (a key listing's cursor).
 */
export function masterNodes(redis: RedisClient): Redis[] {
  if (!(redis instanceof Cluster)) return [redis];
  const address = (node: Redis) => `${node.options.host}:${node.options.port}`;
  return redis.nodes('master').sort((a, b) => address(a).localeCompare(address(b)));
}

/** The Redis URL with any password replaced, for logs and the info endpoint. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    // ioredis also takes credentials from the query (?password=...).
    for (const name of ['password', 'username'])
      if (u.searchParams.has(name)) u.searchParams.set(name, '***');
    return u.toString();
  } catch {
    return 'redis://***';
  }
}
