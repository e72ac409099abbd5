// The locks held now under a prefix (the console's view): a bounded SCAN of the lock keys over every master.
import type { RedisClient } from '../redis/client';
import type { Keyspace } from '../redis/keys';
import { escapeGlob, scanMasters } from '../redis/scan';

/** SCAN calls per master at most: a listing costs bounded work however many keys the database holds. */
const MAX_SCANS = 20;

export interface HeldLock {
  name: string;
  fence: number;
  ttl_ms: number;
}

/**
 * Up to `limit` locks whose name starts with `prefix`, in no particular order; `complete` is false when the walk
 * stopped early (the limit, or MAX_SCANS calls on a master). Fencing counters are not matched: their keys do not
 * end with the closing brace. Not scanPage (the keys' walk): lock keys are internal ones, which it never lists, and
 * this listing is one answer, with no cursor to resume.
 */
export async function heldLocks(
  redis: RedisClient,
  keyspace: Keyspace,
  prefix: string,
  limit: number,
): Promise<{ locks: HeldLock[]; complete: boolean }> {
  const { key } = keyspace.lock('');
  const open = key.slice(0, -1);
  const pattern = `${escapeGlob(open)}${escapeGlob(prefix)}*}`;
  const found: string[] = [];
  const take = (keys: string[]) => found.push(...keys) < limit;
  const complete = (await scanMasters(redis, pattern, 200, MAX_SCANS, take)) && found.length <= limit;
  const keys = found.slice(0, limit);
  const replies = await Promise.all(keys.map((k) => redis.lockStatus(k).catch(() => null)));
  const locks = keys.flatMap((k, i) => {
    const reply = replies[i];
    return reply ? [{ name: k.slice(open.length, -1), fence: reply[0], ttl_ms: reply[1] }] : [];
  });
  return { locks, complete };
}
