// Every Redis key the service uses is built here: user keys (under SVC_KEY_PREFIX) and internal keys.

/** Internal keys start with '#', a character no valid user key can contain. */
export const INTERNAL_PREFIX = '#svc:';

export interface Keyspace {
  /** The Redis key holding the user's key. */
  user(key: string): string;
  /** The user's key for a Redis key under the prefix (for SCAN results). */
  fromRedis(redisKey: string): string;
  /** An internal key, e.g. internal('rl', ip) -> '#svc:rl:<ip>'. */
  internal(...parts: string[]): string;
  /** The pattern matching every user key (for SCAN), escaped for glob characters in the prefix. */
  readonly userPattern: string;
  readonly prefix: string;
  /**
   * The change feed's Redis Stream (issue 18), beside the user keys it describes: one per SVC_KEY_PREFIX, so that
   * services sharing a database under different prefixes never see each other's events.
   */
  readonly changes: string;
  /**
   * On a Redis Cluster, the stream of one master (redis/feed-streams.ts): `#svc:changes:{<tag>}:<prefix>`, the tag
   * first, so that it decides the slot even when the prefix holds a hash tag of its own.
   */
  changesIn(tag: string): string;
}

export function createKeyspace(prefix: string): Keyspace {
  return {
    prefix,
    user: prefix === '' ? (key) => key : (key) => prefix + key,
    fromRedis: (redisKey) => redisKey.slice(prefix.length),
    internal: (...parts) => INTERNAL_PREFIX + parts.join(':'),
    userPattern: `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`,
    changes: `${INTERNAL_PREFIX}changes:${prefix}`,
    changesIn: (tag) => `${INTERNAL_PREFIX}changes:{${tag}}:${prefix}`,
  };
}
