// The change event as the feed's stream holds it: its fields, written once here for every writer and the reader.

/** Stream entry field -> what it holds: the key without SVC_KEY_PREFIX, its Redis type, the write command. */
export const EVENT_FIELDS = { key: 'k', type: 't', op: 'o' } as const;

/** What an event says: never the value. `key` and `type` are '' for a flush, `type` for an expiry or eviction. */
export interface EventFields {
  readonly key: string;
  readonly type: string;
  /** The write command in lower case (set, hset, sadd, del, expire, incrby, ...), flush, expired or evicted. */
  readonly op: string;
}

/** XADD's arguments after the stream's name: the approximate trim, an id Redis assigns, the event's fields. */
export function eventArgs(
  maxlen: number,
  { key, type, op }: EventFields,
): [string, string, number, string, ...string[]] {
  return ['MAXLEN', '~', maxlen, '*', EVENT_FIELDS.key, key, EVENT_FIELDS.type, type, EVENT_FIELDS.op, op];
}

/**
 * The Lua function the scripts append their event with (typed.lua's `changed`), built from the same fields, so that
 * the scripts and the service never disagree on them. FEED is the table src/redis/client.ts puts first.
 */
export const LUA_CHANGED = `local function changed(key, kind, operation)
  if not FEED then return end
  redis.call('XADD', FEED.key, 'MAXLEN', '~', FEED.maxlen, '*',
    '${EVENT_FIELDS.key}', string.sub(key, FEED.strip + 1), '${EVENT_FIELDS.type}', kind, '${EVENT_FIELDS.op}', operation)
end`;

/** The fields of a stream entry ([field, value, ...] as XRANGE and XREAD answer them). */
export function eventOf(fields: readonly string[]): EventFields {
  let key = '';
  let type = '';
  let op = '';
  for (let i = 0; i < fields.length; i += 2) {
    const value = fields[i + 1] ?? '';
    if (fields[i] === EVENT_FIELDS.key) key = value;
    else if (fields[i] === EVENT_FIELDS.type) type = value;
    else if (fields[i] === EVENT_FIELDS.op) op = value;
  }
  return { key, type, op };
}
