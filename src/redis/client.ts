// Creates the ioredis clients (standalone, Sentinel or Cluster) with explicit options and our Lua scripts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import Redis, { Cluster, type RedisOptions } from 'ioredis';
import type { Config } from '../config';
import { LUA_CHANGED } from './change-event';
import { type FunctionSource, useFunctions } from './functions';
import { createKeyspace } from './keys';
import { QUEUE_WRITES, queueInnerBodies, queueScripts } from './queue-scripts';
import { quietReadyCheck } from './ready-check';
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
  /** Plain string sets (string-sets-n.lua): the key count, the keys, their values; per set 1 / 0 or its error. */
  stringSets(numberOfKeys: number, ...args: (string | Buffer)[]): Promise<unknown[]>;
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
  /** Takes a free lock (lock-acquire-2.lua): [1, fence] when taken, [0, holder's fence, ms left] when held. */
  lockAcquire(lock: string, counter: string, secret: string, ttlMs: number): Promise<number[]>;
  /** Extends a lock's TTL when `token` still holds it: 1, else 0. */
  lockRenew(lock: string, token: string, ttlMs: number): Promise<number>;
  /** Compare-and-delete, then tells the waiters (lock-release-1.lua): 1 when released, else 0. */
  lockRelease(lock: string, token: string): Promise<number>;
  /** The holder's [fence, ms left], or null when the lock is free. */
  lockStatus(lock: string): Promise<[number, number] | null>;
  /** Takes a semaphore place (semaphore-acquire-2.lua): [1, fence] when taken, [0, holders, ms left] when full. */
  semaphoreAcquire(
    holders: string,
    counter: string,
    secret: string,
    ttlMs: number,
    limit: number,
  ): Promise<number[]>;
  /** Renews (ttlMs > 0) or releases (0) a place while `token` holds it: 1, else 0. */
  semaphoreHold(holders: string, token: string, ttlMs: number): Promise<number>;
  /** [holders, largest fence held, ms until the first expires], or [0]. */
  semaphoreStatus(holders: string): Promise<number[]>;
  /** A lease's keep-alive (lease-keepalive-2.lua): its attached locks [name, token, ...], or null when it is gone. */
  leaseKeepalive(lease: string, locks: string, ttlMs: number): Promise<string[] | null>;
  /** A rate-limit decision (quota-check-n.lua): key count, policy, overrides, counters, mode, cost, identifiers. */
  quotaCheck(numberOfKeys: number, ...args: (string | number)[]): Promise<unknown>;
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
  'stringSets',
  'keyDelete',
  'idempotent',
  ...QUEUE_WRITES,
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
    ...queueInnerBodies(),
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
    stringSets: { lua: script('string-sets-n.lua') },
    keyDelete: { lua: script('key-delete-1.lua'), numberOfKeys: 1 },
    rateLimitIncrement: { lua: source('rate-limit-increment-1.lua'), numberOfKeys: 1 },
    // A writing script under an Idempotency-Key: the record, then the inner script's keys (the count comes first).
    idempotent: { lua: `${header}\n${TYPED}\n${innerScripts()}\n${source('idempotent-n.lua')}` },
    idempotentClaim: { lua: source('idempotent-claim-1.lua'), numberOfKeys: 1 },
    idempotentSettle: { lua: source('idempotent-settle-1.lua'), numberOfKeys: 1 },
    // The key count comes first in each call.
    upstashBounded: { lua: `${budgetHeader(config)}\n${source('upstash-bounded-n.lua')}` },
    ...queueScripts(feedHeader(config)),
    lockAcquire: { lua: source('lock-acquire-2.lua'), numberOfKeys: 2 },
    lockRenew: { lua: source('lock-renew-1.lua'), numberOfKeys: 1 },
    lockRelease: { lua: source('lock-release-1.lua'), numberOfKeys: 1 },
    lockStatus: { lua: source('lock-status-1.lua'), numberOfKeys: 1 },
    semaphoreAcquire: { lua: source('semaphore-acquire-2.lua'), numberOfKeys: 2 },
    semaphoreHold: { lua: source('semaphore-hold-1.lua'), numberOfKeys: 1 },
    semaphoreStatus: { lua: source('semaphore-status-1.lua'), numberOfKeys: 1 },
    leaseKeepalive: { lua: source('lease-keepalive-2.lua'), numberOfKeys: 2 },
    // The key count comes first in each call.
    quotaCheck: { lua: source('quota-check-n.lua') },
  };
}

/** The scripts that run as Redis Functions where the server offers them (functions.ts), and their Lua around them. */
function functionSource(config: Config): FunctionSource {
  const { enabled, maxlen } = config.changes;
  const cluster = enabled && redisMode(config) === 'cluster';
  const feed = cluster ? 'local FEED = false' : feedHeader(config);
  const reset = 'spent_elements, spent_bytes = 0, 0';
  // On a Cluster each call names its master's stream last (see feedHeader): taken off ARGV per call.
  const strip = Buffer.byteLength(createKeyspace(config.keyPrefix).prefix);
  const clusterFeed = [
    `FEED = {key = table.remove(ARGV), maxlen = ${maxlen}, strip = ${strip}}`,
    `local feed_here = redis.pcall('EXISTS', FEED.key)`,
    `if type(feed_here) == 'table' and feed_here.err then return redis.error_reply('FEED_ELSEWHERE ' .. FEED.key) end`,
  ].join('\n');
  // A read under If-Match is named a stream like the writes (typedEtag is in FEED_SCRIPTS) but writes nothing.
  const body = (file: string, writes = true, feed = writes) => ({ lua: source(file), writes, feed });
  return {
    prelude: `${feed}\n${budgetHeader(config)}\n${TYPED}`,
    readCall: reset,
    writeCall: cluster ? `${reset}\n${clusterFeed}` : reset,
    bodies: {
      typedRead: body('typed-read-1.lua', false),
      typedEtagRead: body('typed-etag-1.lua', false, true),
      typedWrite: body('typed-write-1.lua'),
      typedIncr: body('typed-incr-1.lua'),
      typedEtag: body('typed-etag-1.lua'),
      typedBatch: body('typed-batch-n.lua'),
      stringSets: body('string-sets-n.lua'),
      keyDelete: body('key-delete-1.lua'),
    },
  };
}

/** How many keys each function's call names first, as its script's ioredis method takes them. */
const FUNCTION_KEYS = new Map<string, number | 'first'>([
  ['typedRead', 1],
  ['typedEtag', 1],
  ['typedWrite', 1],
  ['typedIncr', 1],
  ['typedBatch', 'first'],
  ['stringSets', 'first'],
  ['keyDelete', 1],
]);

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

/** What the engine's plain commands (no script) must know of a client's settings: reply budget, change feed. */
interface ClientSettings {
  readonly budget: { readonly elements: number; readonly bytes: number };
  /** The change feed is on: every write appends its event in the same atomic call (a script). */
  readonly feed: boolean;
}
const settings = new WeakMap<object, ClientSettings>();

/** The reply budget of requests on `redis` (SVC_MAX_REPLY_ELEMENTS / _BYTES; their defaults for a client made elsewhere). */
export function replyBudget(redis: object): { readonly elements: number; readonly bytes: number } {
  return settings.get(redis)?.budget ?? { elements: 100_000, bytes: 16_777_216 };
}

/** Whether writes on `redis` append change events (then they run in scripts); true for a client made elsewhere. */
export const feedOn = (redis: object): boolean => settings.get(redis)?.feed ?? true;

export function createRedis(config: Config): RedisClient {
  const redis = createClient(config);
  const { maxReplyElements: elements, maxReplyBytes: bytes } = config.limits;
  settings.set(redis, { budget: { elements, bytes }, feed: config.changes.enabled });
  useFunctions(redis, functionSource(config), FUNCTION_KEYS);
  return redis;
}

function createClient(config: Config): RedisClient {
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
      // FCALL's first argument is the function's name.
      autoPipeliningIgnoredCommands: [
        'typedBatch',
        'stringSets',
        'idempotent',
        'upstashBounded',
        'quotaCheck',
        'fcall',
      ],
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
    return writeTogether(quietReadyCheck(redis)) as RedisClient;
  }
  return writeTogether(quietReadyCheck(new Redis(url, options))) as RedisClient;
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
  if (!(redis instanceof Cluster)) return writeTogether(quietReadyCheck(redis.duplicate(own))) as RedisClient;
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
