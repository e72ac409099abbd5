// Every Redis key the service uses is built here: user keys (under SVC_KEY_PREFIX) and internal keys.

/** Internal keys start with '#', a character no valid user key can contain. */
export const INTERNAL_PREFIX = '#svc:';

const QUEUE_PREFIX = `${INTERNAL_PREFIX}q:`;

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
  /**
   * The record of an Idempotency-Key (ops/idempotent.ts): `#svc:idem:<digest>`; on a Cluster
   * `#svc:idem:{<tag>}:<digest>`, the tag that of the written key, so that the record is in the key's slot.
   */
  idempotency(digest: string, tag?: string): string;
  /**
   * A queue's base key (its settings hash), `#svc:q:{<prefix><name>}`: every other key of the queue is this name plus
   * a suffix (redis/scripts/queue.lua), so the `{...}` tag keeps all of them in one Cluster slot.
   */
  queue(name: string): string;
  /** The SCAN pattern of the base keys of the queues whose names start with `start` (queue names hold no glob characters). */
  queuePattern(start: string): string;
  /** The SCAN pattern of every key of every queue under the prefix (a flush under a prefix removes them too). */
  readonly queueKeys: string;
  /** A queue's stream (its ready and in-flight messages): the base key + ':s', as queue.lua names it. */
  queueStream(name: string): string;
  /** A queue's name from its base key. */
  queueName(baseKey: string): string;
  /**
   * A lock (locks/): `#svc:lock:{<prefix><name>}`, holding its owner token with the TTL (and the channel its
   * waiters listen on), and its fencing counter `...:fence` in the same slot, which never expires.
   */
  lock(name: string): { readonly key: string; readonly fence: string };
  /** A lease (locks/leases.ts): `#svc:lease:{<prefix><id>}` (its TTL) and its attached locks `...:locks`. */
  lease(id: string): { readonly key: string; readonly locks: string };
  /** A semaphore (locks/): `#svc:sem:{<prefix><name>}`, a sorted set of its holders, and its fencing counter. */
  semaphore(name: string): { readonly key: string; readonly fence: string };
  /**
   * A rate-limit policy (ratelimits/): `#svc:quota:{<prefix><policy>}` (a hash), its overrides `...:over` and one
   * counter per identifier `...:id:<identifier>`, all in one slot so that several identifiers are decided at once.
   */
  quota(policy: string): { readonly policy: string; readonly overrides: string; counter(id: string): string };
}

/** The part of a Redis key that decides its Cluster slot: the first non-empty {...}, else the whole key. */
export function slotTag(redisKey: string): string {
  const open = redisKey.indexOf('{');
  const close = open < 0 ? -1 : redisKey.indexOf('}', open + 1);
  return close > open + 1 ? redisKey.slice(open + 1, close) : redisKey;
}

export function createKeyspace(prefix: string): Keyspace {
  // The prefix in a SCAN pattern, its glob characters escaped.
  const glob = prefix.replace(/[*?[\]\\]/g, '\\$&');
  return {
    prefix,
    user: prefix === '' ? (key) => key : (key) => prefix + key,
    fromRedis: (redisKey) => redisKey.slice(prefix.length),
    internal: (...parts) => INTERNAL_PREFIX + parts.join(':'),
    userPattern: `${glob}*`,
    changes: `${INTERNAL_PREFIX}changes:${prefix}`,
    changesIn: (tag) => `${INTERNAL_PREFIX}changes:{${tag}}:${prefix}`,
    idempotency: (digest, tag) =>
      tag === undefined ? `${INTERNAL_PREFIX}idem:${digest}` : `${INTERNAL_PREFIX}idem:{${tag}}:${digest}`,
    queue: (name) => `${QUEUE_PREFIX}{${prefix}${name}}`,
    queuePattern: (start) => `${QUEUE_PREFIX}{${glob}${start}*}`,
    queueKeys: `${QUEUE_PREFIX}{${glob}*`,
    queueStream: (name) => `${QUEUE_PREFIX}{${prefix}${name}}:s`,
    queueName: (baseKey) => baseKey.slice(QUEUE_PREFIX.length + 1 + prefix.length, -1),
    lock: (name) => {
      const key = `${INTERNAL_PREFIX}lock:{${prefix}${name}}`;
      return { key, fence: `${key}:fence` };
    },
    lease: (id) => {
      const key = `${INTERNAL_PREFIX}lease:{${prefix}${id}}`;
      return { key, locks: `${key}:locks` };
    },
    semaphore: (name) => {
      const key = `${INTERNAL_PREFIX}sem:{${prefix}${name}}`;
      return { key, fence: `${key}:fence` };
    },
    quota: (policy) => {
      const key = `${INTERNAL_PREFIX}quota:{${prefix}${policy}}`;
      return { policy: key, overrides: `${key}:over`, counter: (id) => `${key}:id:${id}` };
    },
  };
}
