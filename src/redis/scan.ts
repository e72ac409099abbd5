// Key listing by SCAN: one bounded page over the masters in turn, behind an opaque cursor; never KEYS.
import type { Redis } from 'ioredis';
import { ApiError, REDIS_RETRY_AFTER } from '../errors';
import { masterNodes, type RedisClient } from './client';
import { keyTag, type ScanPosition } from './cursor';
import { INTERNAL_PREFIX, type Keyspace } from './keys';
import { sizeCommand } from './types';

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

/** The masters to walk, in masterNodes' stable order (503 before any is connected); every listing walks these. */
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
export const escapeGlob = (text: string) => text.replace(/[*?[\]\\]/g, '\\$&');

/**
 * The SCAN walk of every master for a listing answered in one go (no cursor: the locks held, the queues' names), one
 * master after another: at most `maxScans` calls of MATCH `pattern` COUNT `count` each, every reply's keys given to
 * `take`, which answers false once it has enough. True when every master's walk reached its end; false when one
 * stopped early, or when `take` had enough with masters left unscanned (the caller still cuts a last reply that
 * went past its limit). (scanPage's walk differs: its budget is per page over all the masters, and it resumes from
 * a cursor.)
 */
export async function scanMasters(
  redis: RedisClient,
  pattern: string,
  count: number,
  maxScans: number,
  take: (keys: string[]) => boolean,
): Promise<boolean> {
  const nodes = masters(redis);
  let complete = true;
  let more = true;
  for (const [i, node] of nodes.entries()) {
    let cursor = '0';
    let scans = 0;
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', count);
      more = take(keys);
      cursor = next;
    } while (cursor !== '0' && ++scans < maxScans && more);
    if (cursor !== '0') complete = false;
    if (!more) return complete && i === nodes.length - 1;
  }
  return complete;
}

export interface PageRequest {
  /** The user-visible prefix (a tenant's prefix already applied). */
  prefix: string;
  type?: string;
  limit: number;
  from: ScanPosition;
}

/**
 * One page of at most `limit` keys: SCAN calls (COUNT = the keys still wanted) until `limit` keys are found, the
 * walk ends or MAX_SCANS_PER_PAGE calls were made; then TYPE and TTL of the keys in one pipeline per node. A SCAN
 * reply that gives more keys than the page takes (Valkey's may give many more than COUNT) is not left behind: the
 * cursor stays on the SCAN cursor that produced it, and the next page sends the same SCAN again and goes on after
 * the last key taken (ScanPosition.resume).
 */
export async function scanPage(redis: RedisClient, keyspace: Keyspace, request: PageRequest): Promise<Page> {
  const nodes = masters(redis);
  const match = `${escapeGlob(keyspace.user(request.prefix))}*`;
  const found: { node: Redis; keys: string[] }[] = [];
  let total = 0;
  let { node, cursor, resume } = request.from;
  for (let calls = 0; calls < MAX_SCANS_PER_PAGE && node < nodes.length && total < request.limit; calls++) {
    const client = nodes[node] as Redis;
    const wanted = request.limit - total;
    const count = resume?.count ?? wanted;
    const args: (string | number)[] = ['MATCH', match, 'COUNT', count];
    if (request.type) args.push('TYPE', request.type);
    const [next, keys] = (await client.call('SCAN', cursor, ...args).catch(refusedType)) as [
      string,
      string[],
    ];
    // The service's own keys (`#svc:...`) match when SVC_KEY_PREFIX is empty: never listed. In tag order, so that
    // the reply sent again by a resumed page is taken up where this one stopped (ScanPosition.resume).
    const visible = byTag(keys.filter((k) => !k.startsWith(INTERNAL_PREFIX)));
    const start = resume ? resumeAt(visible, resume.last) : 0;
    const taken = visible.slice(start, start + wanted);
    if (taken.length > 0) found.push({ node: client, keys: taken.map((t) => t.key) });
    total += taken.length;
    if (visible.length > start + wanted) {
      // More in this reply than the page takes: the next page sends this SCAN again.
      resume = { count, last: (taken[taken.length - 1] as Tagged).tag };
      break;
    }
    resume = undefined;
    if (next === '0') [node, cursor] = [node + 1, '0'];
    else cursor = next;
  }
  const entries = (await Promise.all(found.map(({ node: n, keys }) => describe(n, keys)))).flat();
  const keys = entries
    .filter((e) => !request.type || e.type === request.type)
    .map((e) => ({ ...e, key: keyspace.fromRedis(e.key) }));
  const done = node >= nodes.length;
  return { keys, next: done ? null : { node, cursor, ...(resume ? { resume } : {}) } };
}

interface Tagged {
  readonly key: string;
  readonly tag: string;
}

/** Keys with their tags, in tag order (ties, 48-bit tags of two keys alike, by the key). */
const byTag = (keys: readonly string[]): Tagged[] =>
  keys
    .map((key) => ({ key, tag: keyTag(key) }))
    .sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

/** Where a SCAN reply sent again resumes: at the first key whose tag comes after the last one taken. */
function resumeAt(visible: readonly Tagged[], last: string): number {
  const at = visible.findIndex((k) => k.tag > last);
  return at < 0 ? visible.length : at;
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

/** `{key, type, ttl, size}` of one user key, or null when it does not exist. */
export async function keyInfo(
  redis: RedisClient,
  keyspace: Keyspace,
  key: string,
): Promise<(KeyEntry & { size: number | null }) | null> {
  const redisKey = keyspace.user(key);
  const [type, ttl] = await Promise.all([redis.type(redisKey), redis.ttl(redisKey)]);
  if (type === 'none' || ttl === -2) return null;
  const command = sizeCommand(type);
  const size = command ? ((await redis.call(command, redisKey)) as number) : null;
  return { key, type, ttl, size };
}
