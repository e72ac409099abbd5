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
  /** The stream it was read from (not enumerable: never sent to clients). Several on a Redis Cluster, one elsewhere. */
  readonly stream?: string;
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

/** `toEvent` for the entries of `stream`, each remembering it (see ChangeEvent.stream). */
export function eventsOf(stream: string, entries: readonly StreamEntry[]): ChangeEvent[] {
  return entries.map((entry) => Object.defineProperty(toEvent(entry), 'stream', { value: stream }));
}

const STREAM_ID = /^(\d{1,20})-(\d{1,20})$/;
/** Digits without leading zeros ('0' stays), so that ids compare by length, then text. */
const canonical = (digits: string) => digits.replace(/^0+(?=\d)/, '');

/** Each part of a stream id is an unsigned 64-bit number; Redis refuses a larger one ("Invalid stream ID"). */
export const MAX_ID_PART = '18446744073709551615';
const MAX_PART = MAX_ID_PART;

/**
 * A stream id ('1700000000000-0'; a bare millisecond count means its '-0'), or undefined when it is not one. The
 * largest id is not one either: reading after it (an exclusive range) is refused by Redis.
 */
export function parseId(text: string): string | undefined {
  const m = /^\d{1,20}$/.test(text) ? [text, text, '0'] : STREAM_ID.exec(text);
  if (!m) return undefined;
  const ms = canonical(m[1] as string);
  const seq = canonical(m[2] as string);
  if (compareDigits(ms, MAX_PART) > 0 || compareDigits(seq, MAX_PART) > 0) return undefined;
  if (ms === MAX_PART && seq === MAX_PART) return undefined;
  return `${ms}-${seq}`;
}

/** Orders two decimal numbers without leading zeros: by length, then by text (no BigInt on the fan-out path). */
function compareDigits(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Orders two stream ids (as Redis or parseId writes them): negative when `a` comes first. */
export function compareIds(a: string, b: string): number {
  const i = a.indexOf('-');
  const j = b.indexOf('-');
  return compareDigits(a.slice(0, i), b.slice(0, j)) || compareDigits(a.slice(i + 1), b.slice(j + 1));
}
