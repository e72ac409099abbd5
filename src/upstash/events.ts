// Change-feed events for writes through the Upstash endpoint: one per key of each successful write command.
import type { Store } from '../ops/run';
import type { Planned } from './plan';

/** The feed's type of a command's keys, from its ACL category ('' when it spans types: DEL, EXPIRE, RENAME, ...). */
const TYPES: Record<string, string> = {
  '@string': 'string',
  '@bitmap': 'string',
  '@hyperloglog': 'string',
  '@hash': 'hash',
  '@list': 'list',
  '@set': 'set',
  '@sortedset': 'zset',
  '@geo': 'zset',
  '@stream': 'stream',
};

function typeOf(planned: Planned): string {
  const types = new Set<string>();
  for (const category of planned.spec.categories) {
    const type = TYPES[category];
    if (type) types.add(type);
  }
  return types.size === 1 ? ([...types][0] as string) : '';
}

/** Writes that change their key whenever they succeed, although they may answer 0 (HSET of existing fields). */
const ALWAYS_CHANGES = new Set(['hset', 'hmset', 'zadd', 'setrange', 'setbit', 'lset', 'xgroup', 'xtrim']);

/** Whether a write's reply shows a change (as typed.lua's `changes`): not null, 0 or an empty array. */
export function changed(name: string, reply: unknown): boolean {
  if (reply === null || reply === undefined) return false;
  if (typeof reply === 'number') return reply > 0 || ALWAYS_CHANGES.has(name.split('|', 1)[0] as string);
  if (Array.isArray(reply)) return reply.length > 0;
  return true;
}

/**
 * Appends the events of a write that succeeded, after it (not in the same atomic step as the typed API's scripts:
 * a failure in between loses the event, never the write). Scripts and functions name their declared keys.
 */
export async function appendEvents(store: Store, planned: Planned, reply: unknown): Promise<void> {
  const { changes, streams, keyspace } = store;
  if (!changes || planned.keys.length === 0 || !changed(planned.name, reply)) return;
  const type = typeOf(planned);
  const op = planned.name.split('|', 1)[0] as string;
  await Promise.all(
    planned.keys.map((redisKey) => {
      const stream = streams ? streams.forKey(redisKey) : changes.key;
      if (stream === '') return undefined;
      const key = keyspace.fromRedis(redisKey);
      return store.redis.xadd(stream, 'MAXLEN', '~', changes.maxlen, '*', 'k', key, 't', type, 'o', op);
    }),
  ).catch(() => {});
}
