// What the server allows, learned once per connection event: the commands the service uses, engine, version, mode.
import { refusalReason } from '../errors';
import type { RedisClient } from './client';
import { INTERNAL_PREFIX } from './keys';

/** A command the server refused when tried, why, and what the service does without it. */
export interface Refusal {
  /** As the service sends it: `MEMORY USAGE`, `FLUSHDB`. */
  readonly command: string;
  /** `unknown command: renamed or disabled`, or `denied by ACL (NOPERM)`. */
  readonly reason: string;
  readonly affects: string;
}

export interface Capabilities {
  /** `valkey` when the server says so (Valkey reports `redis_version:7.2.4` for compatibility). */
  readonly engine: 'redis' | 'valkey' | 'unknown';
  /** The engine's own version (`valkey_version` on Valkey); null when neither INFO nor HELLO answered. */
  readonly version: string | null;
  /** The server runs in cluster mode (`redis_mode:cluster`). */
  readonly cluster: boolean;
  /** FUNCTION LOAD and FCALL are allowed (Redis Functions can replace scripts). */
  readonly functions: boolean;
  /** SVC_REDIS_MAX_ARGUMENTS: the most arguments one command may carry (null: no cap). */
  readonly maxArguments: number | null;
  readonly refused: readonly Refusal[];
  readonly probedAt: string;
}

/** A key no user key can be (internal prefix) and nobody writes: the probes only ever read it or miss it. */
const PROBE_KEY = `${INTERNAL_PREFIX}probe:never-written`;

/**
 * Each command the service relies on, tried harmlessly: a missing key (`HEXPIRE` of one sets nothing), `XADD
 * NOMKSTREAM` on a missing key, an invalid library; `FLUSHDB` only queued in a MULTI that is discarded (Redis
 * refuses an unknown or ACL-denied command as it queues it, and runs nothing of a discarded one). A renamed
 * command (or one the version lacks) answers "unknown command" and an ACL-denied one NOPERM before anything runs;
 * any other answer (a value, QUEUED, a syntax error, NOSCRIPT, MOVED) means the server accepts the command.
 */
const PROBES: ReadonlyArray<readonly [string, readonly string[], string]> = [
  ['INFO', ['INFO', 'server'], 'health has no memory figures; engine and version come from HELLO'],
  [
    'MEMORY USAGE',
    ['MEMORY', 'USAGE', PROBE_KEY],
    'whole reads are sized from HSTRLEN sums or element counts, and measured as they are read; /store/admin/memory answers 501',
  ],
  ['OBJECT IDLETIME', ['OBJECT', 'IDLETIME', PROBE_KEY], '/store/admin/memory reports last_accessed as null'],
  ['COMMAND', ['COMMAND', 'COUNT'], '/upstash uses the command table shipped with the service only'],
  [
    'COMMAND GETKEYS',
    ['COMMAND', 'GETKEYS', 'GET', PROBE_KEY],
    '/upstash refuses commands without exact key specs',
  ],
  ['WAIT', ['WAIT', '0', '0'], 'SVC_REDIS_WAIT_REPLICAS cannot be used'],
  ['FLUSHDB', ['FLUSHDB'], '/store/admin/flush without a key prefix answers 501'],
  ['UNLINK', ['UNLINK', PROBE_KEY], 'flush under a key prefix answers 501'],
  ['DBSIZE', ['DBSIZE'], 'flush and /upstash DBSIZE answer 501'],
  [
    'SCAN',
    ['SCAN', '0', 'MATCH', PROBE_KEY, 'COUNT', '1'],
    'key listing and flush under a prefix answer 501',
  ],
  ['XADD', ['XADD', PROBE_KEY, 'NOMKSTREAM', '*', 'f', 'v'], 'the change feed cannot be used'],
  // Hash-field expiry (Redis 8, Valkey 9; absent before): fieldExpiry below decides from these two.
  [
    'HTTL',
    ['HTTL', PROBE_KEY, 'FIELDS', '1', 'f'],
    'no hash field expires here: a field read answers ttl -1 without asking for it',
  ],
  [
    'HEXPIRE',
    ['HEXPIRE', PROBE_KEY, '1', 'FIELDS', '1', 'f'],
    'hash field TTLs cannot be set: a field write with ttl answers 501, nothing written',
  ],
  ['EVALSHA', ['EVALSHA', '0'.repeat(40), '0'], 'every data operation fails: the service needs Lua scripts'],
  ['FUNCTION LOAD', ['FUNCTION', 'LOAD', 'probe: not a library'], 'writes run as scripts (EVALSHA)'],
  ['FCALL', ['FCALL', `${INTERNAL_PREFIX}probe`, '0'], 'writes run as scripts (EVALSHA)'],
  [
    'CONFIG GET',
    ['CONFIG', 'GET', 'notify-keyspace-events'],
    'SVC_CHANGES_EXPIRED cannot read notify-keyspace-events',
  ],
];

const field = (text: string, name: string) => new RegExp(`^${name}:([^\\r\\n]*)`, 'm').exec(text)?.[1];

type Identity = Pick<Capabilities, 'engine' | 'version' | 'cluster'>;

/**
 * Engine, version and mode from `INFO server` (Valkey says `server_name:valkey`, keeps `redis_version:7.2.4`, and
 * from 8.0 names the mode `server_mode` instead of `redis_mode`).
 */
export function identityFromInfo(info: string): Identity {
  const valkey = field(info, 'server_name') === 'valkey' || field(info, 'valkey_version') !== undefined;
  return {
    engine: valkey ? 'valkey' : 'redis',
    version: (valkey ? field(info, 'valkey_version') : undefined) ?? field(info, 'redis_version') ?? null,
    cluster: (field(info, 'server_mode') ?? field(info, 'redis_mode')) === 'cluster',
  };
}

/** Engine, version and mode from INFO server, else from HELLO 2 (which Redis 6+ and Valkey answer with both). */
async function identity(node: RedisClient, info: unknown): Promise<Identity> {
  if (typeof info === 'string') return identityFromInfo(info);
  const hello = (await node.call('HELLO', '2').catch(() => null)) as unknown[] | null;
  if (!Array.isArray(hello)) return { engine: 'unknown', version: null, cluster: false };
  const map = new Map<string, unknown>();
  for (let i = 0; i + 1 < hello.length; i += 2) map.set(String(hello[i]), hello[i + 1]);
  const server = String(map.get('server') ?? '');
  return {
    engine: server === 'valkey' ? 'valkey' : server === 'redis' ? 'redis' : 'unknown',
    version: map.has('version') ? String(map.get('version')) : null,
    cluster: map.get('mode') === 'cluster',
  };
}

/**
 * Tries every command of PROBES in one pipeline on one node, then reads the engine and version. Rejects only when the node cannot be reached; the answer is frozen.
 */
export async function probeCapabilities(
  redis: RedisClient,
  maxArguments: number | null,
): Promise<Capabilities> {
  // On a Cluster the pipeline goes to the node of PROBE_KEY's slot (the keyless commands go with it).
  const node = redis;
  const pipeline = node.pipeline();
  // Where each probe's own reply is among those of MULTI and DISCARD.
  const at: number[] = [];
  let sent = 0;
  for (const [command, args] of PROBES) {
    const queued = command === 'FLUSHDB';
    if (queued) pipeline.call('MULTI');
    at.push(sent + (queued ? 1 : 0));
    pipeline.call(...(args as [string, ...string[]]));
    if (queued) pipeline.call('DISCARD');
    sent += queued ? 3 : 1;
  }
  const all = (await pipeline.exec()) ?? [];
  const replies = at.map((index) => all[index]);
  const refused: Refusal[] = [];
  PROBES.forEach(([command, , affects], i) => {
    const [err] = replies[i] ?? [new Error('no reply')];
    // A lost connection fails the whole probe (it is tried again at the next connection).
    if (err && err.name !== 'ReplyError') throw err;
    const reason = err ? refusalReason(err) : undefined;
    if (reason) refused.push(Object.freeze({ command, reason, affects }));
  });
  const info = replies[0]?.[0] ? undefined : replies[0]?.[1];
  const refuses = (command: string) => refused.some((r) => r.command === command);
  return Object.freeze({
    ...(await identity(node, info)),
    functions: !refuses('FUNCTION LOAD') && !refuses('FCALL'),
    maxArguments,
    refused: Object.freeze(refused),
    probedAt: new Date().toISOString(),
  });
}

/** Why the server refuses `command` (as PROBES names it), or undefined when it allows it or was not probed. */
export function refusalOf(capabilities: Capabilities | undefined, command: string): Refusal | undefined {
  return capabilities?.refused.find((r) => r.command === command);
}

/**
 * Whether the server has hash-field expiry (Redis 8, Valkey 9) for `command`: HTTL reads a field's TTL, HEXPIRE
 * sets it. False when the probe found it refused (absent before Redis 8 / Valkey 9, renamed, or denied), true when
 * allowed, undefined before a probe answered. The one place that decides it: the field read and write ask here
 * (ops/hashes.ts), and /store/admin/info shows the refusals.
 */
export function fieldExpiry(
  capabilities: Capabilities | undefined,
  command: 'HTTL' | 'HEXPIRE',
): boolean | undefined {
  return capabilities === undefined ? undefined : refusalOf(capabilities, command) === undefined;
}
