// Key listing by SCAN: one bounded page over the masters in turn, behind an opaque cursor; never KEYS.
import type { Redis } from 'ioredis';
import { ApiError, REDIS_RETRY_AFTER } from '../errors';
import { FAMILIES } from '../families';
import { masterNodes, type RedisClient } from './client';
import type { ScanPosition } from './cursor';
import { INTERNAL_PREFIX, type Keyspace } from './keys';

/** At most this many SCAN calls per page: a sparse prefix on a big keyspace answers quickly, incomplete. */
export const MAX_SCANS_PER_PAGE = 10;

export interface KeyEntry {
  key: string;
  type: string;
  ttl: number;
}

export interface Page {
  keys: KeyEntry[];
  /** Where the next page starts; null when the walk is done. */
  next: ScanPosition | null;
}

/** Redis versions that know the type names refuse an unknown one (older ones find no key of it): a 400. */
function refusedType(err: Error): never {
  if (err.name === 'ReplyError' && /type/i.test(err.message))
    throw new ApiError('invalid_request', `type is not a type Redis knows (${err.message})`);
  throw err;
}

/** The masters to walk, in masterNodes' stable order. */
function masters(redis: RedisClient): Redis[] {
  const nodes = masterNodes(redis);
  // No master known yet (still connecting): an empty list would end the walk as if it were complete.
  if (nodes.length === 0)
    throw new ApiError('service_unavailable', 'No Redis Cluster master is connected yet', {
      retryAfter: REDIS_RETRY_AFTER,
    });
  return nodes;
}

/** Glob characters of SCAN's MATCH, escaped so that a prefix matches itself only. */
const escapeGlob = (text: string) => text.replace(/[*?[\]\\]/g, '\\$&');

export interface PageRequest {
  /** The user-visible prefix (a tenant's prefix already applied). */
  prefix: string;
  type?: string;
  limit: number;
  from: ScanPosition;
}

/**
 * One page of at most `limit` keys: first the keys the previous page left over (see ScanPosition.pending), then
 * SCAN calls (COUNT = the keys still wanted) until `limit` keys are found, the walk ends or MAX_SCANS_PER_PAGE
 * calls were made; then TYPE and TTL of the keys in one pipeline per node. A SCAN reply is never split in Redis
 * (its cursor resumes after it): the keys it gave beyond `limit` travel in the cursor to the next page.
 */
export async function scanPage(redis: RedisClient, keyspace: Keyspace, request: PageRequest): Promise<Page> {
  const nodes = masters(redis);
  const match = `${escapeGlob(keyspace.user(request.prefix))}*`;
  const found: { node: Redis; keys: string[] }[] = [];
  let total = 0;
  let { node, cursor } = request.from;
  let pending: ScanPosition['pending'];
  const carried = request.from.pending;
  // A cursor is the client's text: its keys are kept only inside the (tenant-scoped) prefix.
  const left = carried?.keys.filter((k) => k.startsWith(request.prefix)) ?? [];
  const carriedNode = carried ? nodes[carried.node] : undefined;
  if (carried && carriedNode && left.length > 0) {
    found.push({ node: carriedNode, keys: left.slice(0, request.limit).map((k) => keyspace.user(k)) });
    total = Math.min(left.length, request.limit);
    if (left.length > request.limit) pending = { node: carried.node, keys: left.slice(request.limit) };
  }
  for (
    let calls = 0;
    calls < MAX_SCANS_PER_PAGE && node < nodes.length && total < request.limit && !pending;
    calls++
  ) {
    const client = nodes[node] as Redis;
    const wanted = request.limit - total;
    const args: (string | number)[] = ['MATCH', match, 'COUNT', wanted];
    if (request.type) args.push('TYPE', request.type);
    const [next, keys] = (await client.call('SCAN', cursor, ...args).catch(refusedType)) as [
      string,
      string[],
    ];
    // The service's own keys (`#svc:...`) match when SVC_KEY_PREFIX is empty: never listed.
    const visible = keys.filter((k) => !k.startsWith(INTERNAL_PREFIX));
    if (visible.length > wanted)
      pending = { node, keys: visible.slice(wanted).map((k) => keyspace.fromRedis(k)) };
    if (visible.length > 0) found.push({ node: client, keys: visible.slice(0, wanted) });
    total += Math.min(visible.length, wanted);
    if (next === '0') [node, cursor] = [node + 1, '0'];
    else cursor = next;
  }
  const entries = (await Promise.all(found.map(({ node: n, keys }) => describe(n, keys)))).flat();
  const keys = entries
    .filter((e) => !request.type || e.type === request.type)
    .map((e) => ({ ...e, key: keyspace.fromRedis(e.key) }));
  const done = node >= nodes.length && !pending;
  return { keys, next: done ? null : { node, cursor, ...(pending ? { pending } : {}) } };
}

/** TYPE and TTL of keys on one node, in one round trip; keys that vanished since SCAN are left out. */
async function describe(node: Redis, keys: string[]): Promise<KeyEntry[]> {
  const pipeline = node.pipeline();
  for (const key of keys) pipeline.type(key).ttl(key);
  const replies = (await pipeline.exec()) ?? [];
  const entries: KeyEntry[] = [];
  keys.forEach((key, i) => {
    const [typeErr, type] = replies[2 * i] ?? [null, 'none'];
    const [ttlErr, ttl] = replies[2 * i + 1] ?? [null, -2];
    if (typeErr) throw typeErr;
    if (ttlErr) throw ttlErr;
    if (type !== 'none' && ttl !== -2) entries.push({ key, type: type as string, ttl: ttl as number });
  });
  return entries;
}

/** The command that answers a key's size, by Redis type, from the families' descriptors; other types have none. */
const SIZE: ReadonlyMap<string, string> = new Map(
  FAMILIES.flatMap((f): [string, string][] => (f.sizeCommand ? [[f.redisType, f.sizeCommand]] : [])),
);

/** `{key, type, ttl, size}` of one user key, or null when it does not exist. */
export async function keyInfo(
  redis: RedisClient,
  keyspace: Keyspace,
  key: string,
): Promise<(KeyEntry & { size: number | null }) | null> {
  const redisKey = keyspace.user(key);
  const [type, ttl] = await Promise.all([redis.type(redisKey), redis.ttl(redisKey)]);
  if (type === 'none' || ttl === -2) return null;
  const command = SIZE.get(type);
  const size = command ? ((await redis.call(command, redisKey)) as number) : null;
  return { key, type, ttl, size };
}
