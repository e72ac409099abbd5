// Change-feed events for writes through the Upstash endpoint: one per key of each successful write command.
import type { Store } from '../redis/store';
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

/**
 * Writes that change their key whenever they succeed, although they may answer 0 (HSET of existing fields, an
 * APPEND of nothing that creates the key) or a
 * negative number (a counter's new value: DECRBY to -5).
 */
const ALWAYS_CHANGES = new Set([
  ...['hset', 'hmset', 'zadd', 'setrange', 'setbit', 'lset', 'xgroup', 'xtrim', 'append'],
  ...['incr', 'incrby', 'decr', 'decrby', 'hincrby'],
]);

/** Deletes of several keys answer how many went, not which: with the feed on they run as DELETE_EACH. */
const DELETES = new Set(['del', 'unlink']);
const DELETE_EACH =
  'local gone = {} for i, key in ipairs(KEYS) do gone[i] = redis.call(ARGV[1], key) end return gone';

/**
 * `planned`, when it deletes several keys, as one script call that deletes each and answers which went (the reply
 * to the client is still their count): the change events then name only the keys deleted. Others unchanged.
 */
export function deletesEach(planned: Planned): Planned {
  if (!DELETES.has(planned.name) || planned.keys.length < 2) return planned;
  const { keys, name } = planned;
  return {
    ...planned,
    args: ['EVAL', DELETE_EACH, String(keys.length), ...keys, name],
    reply: (value) => (value as number[]).reduce((sum, n) => sum + n, 0),
    eventKeys: (value) => keys.filter((_, i) => (value as number[])[i] === 1),
  };
}

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
  const keys = planned.eventKeys ? planned.eventKeys(reply) : planned.keys;
  await Promise.all(
    keys.map((redisKey) => {
      const stream = streams ? streams.forKey(redisKey) : changes.key;
      if (stream === '') return undefined;
      const key = keyspace.fromRedis(redisKey);
      return store.redis.xadd(stream, 'MAXLEN', '~', changes.maxlen, '*', 'k', key, 't', type, 'o', op);
    }),
  ).catch(() => {});
}
