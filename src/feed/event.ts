// A change event as the feed's stream holds it and as clients receive it; stream ids and their order.

/** What a client receives: never the value. `time` is the stream id's milliseconds (when Redis appended it). */
export interface ChangeEvent {
  readonly id: string;
  /** The key without SVC_KEY_PREFIX; '' for a flush. */
  readonly key: string;
  /** The key's Redis type (string, hash, set, ...); '' for a flush. */
  readonly type: string;
  /** The write command in lower case (set, hset, sadd, del, expire, incrby, ...), or 'flush'. */
  readonly op: string;
  readonly time: string;
}

/** A stream entry as ioredis answers XRANGE / XREAD: [id, [field, value, ...]]. */
export type StreamEntry = [string, string[]];

export function toEvent([id, fields]: StreamEntry): ChangeEvent {
  let key = '';
  let type = '';
  let op = '';
  for (let i = 0; i < fields.length; i += 2) {
    const value = fields[i + 1] ?? '';
    if (fields[i] === 'k') key = value;
    else if (fields[i] === 't') type = value;
    else if (fields[i] === 'o') op = value;
  }
  return { id, key, type, op, time: new Date(Number(id.split('-', 1)[0])).toISOString() };
}

const STREAM_ID = /^(\d{1,20})-(\d{1,20})$/;

/** A stream id ('1700000000000-0'; a bare millisecond count means its '-0'), or undefined when it is not one. */
export function parseId(text: string): string | undefined {
  if (/^\d{1,20}$/.test(text)) return `${text}-0`;
  return STREAM_ID.test(text) ? text : undefined;
}

/** Orders two stream ids: negative when `a` comes first. */
export function compareIds(a: string, b: string): number {
  const [am = '0', as = '0'] = a.split('-');
  const [bm = '0', bs = '0'] = b.split('-');
  const ms = BigInt(am) - BigInt(bm);
  if (ms !== 0n) return ms < 0n ? -1 : 1;
  const seq = BigInt(as) - BigInt(bs);
  return seq === 0n ? 0 : seq < 0n ? -1 : 1;
}
