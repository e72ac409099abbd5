// Reads that need no script (issue 36): a string's value and TTL from Redis's own commands, sent together in the
// connection's shared write, the ETag digested here. Same replies as typed_read / typed_etag in typed.lua.
import { ReplyError } from 'ioredis';
import { refusalReason } from '../errors';
import type { Command } from '../ops/op';
import { takesSetNxGet } from '../redis/capability-watch';
import { type Reply, replyBudget, UNPAGED_MAX } from '../redis/client';
import type { Store } from '../redis/store';
import { empty, plain, replySize, sent, sentBuffers, sha1, together, wrongType } from './plain-command';
import { zsetPage } from './plain-zset';

/** A string's strong ETag as typed.lua's etag_of makes it: the SHA-1 of its bytes (a Buffer, or text's encoding). */
export const stringEtag = (value: string | Buffer, encoding: 'utf8' | 'latin1' = 'utf8'): string =>
  typeof value === 'string' && encoding === 'latin1' ? sha1(Buffer.from(value, 'latin1')) : sha1(value);

/** The smallest string whose ETag `largeEtag` remembers: below it, the digest costs about what its check would. */
const MEMO_MIN_BYTES = 4096;
/** What the remembered strings hold at most, together (about, in bytes); the oldest go first. */
const MEMO_MAX_BYTES = 4 * 1024 * 1024;

/** Large strings lately read, by Redis key, each with its ETag (a copy of its bytes, or the text itself). */
const memo = new Map<string, { readonly value: string | Buffer; readonly etag: string }>();
let memoBytes = 0;

/**
 * A large string's ETag, remembered: the SHA-1 of 64 KiB is ~32 µs of the gateway's CPU, checking that the value
 * read is the one last digested (Buffer.equals, string ===) ~2 µs. Correct whatever the key: an ETag is a function of
 * the bytes alone, and a value that differs in any byte is digested again. At most MEMO_MAX_BYTES are held.
 */
function largeEtag(key: string, value: string | Buffer): string {
  const known = memo.get(key);
  if (known && sameValue(known.value, value)) return known.etag;
  const etag = stringEtag(value);
  if (value.length > MEMO_MAX_BYTES / 4) return etag;
  if (known) {
    memo.delete(key);
    memoBytes -= known.value.length;
  }
  // A Buffer is copied: the reply's may be a view of a larger one (the parser's pool, a socket read).
  memo.set(key, { value: typeof value === 'string' ? value : Buffer.from(value), etag });
  memoBytes += value.length;
  for (const [oldest, entry] of memo) {
    if (memoBytes <= MEMO_MAX_BYTES) break;
    memo.delete(oldest);
    memoBytes -= entry.value.length;
  }
  return etag;
}

const sameValue = (a: string | Buffer, b: string | Buffer): boolean =>
  typeof a === 'string' ? a === b : typeof b !== 'string' && a.equals(b);

/** typed_read's refusal of a string above the reply budget, with its size (asked only then). */
async function tooLargeString(store: Store, key: string): Promise<Reply> {
  const [err, size] = await plain(store, 'strlen', key);
  if (err) return [err, null];
  return [new ReplyError(`REPLY_TOO_LARGE 1 ${size}`), null];
}

/** A string's value (null: no key) and its TTL when asked, or an error reply; undefined: ask its script. */
export type BoundedString =
  | { readonly value: string | Buffer | null; readonly ttl?: number }
  | { readonly reply: Reply }
  | undefined;

/**
 * `GETRANGE key 0 bytes` (with `TTL key` in the same write when `withTtl`): Redis copies at most bytes + 1, so a
 * larger value is refused (REPLY_TOO_LARGE 1 <its size>) without being read whole; Redis's own errors (WRONGTYPE)
 * as they are. A missing key reads as '' too: the TTL (-2), or else an EXISTS asked then, tells it apart. An empty
 * string, or a key deleted or written between the two commands, is undefined: the caller asks its script, which
 * sees both at once.
 */
export async function boundedString(
  store: Store,
  key: string,
  bytes: number,
  buffers: boolean,
  withTtl: boolean,
): Promise<BoundedString> {
  const [read, ttl] = (await together(store, [
    sent(store, buffers ? 'getrangeBuffer' : 'getrange', key, 0, bytes),
    withTtl ? sent(store, 'ttl', key) : undefined,
  ])) as [Reply, Reply | undefined];
  if (read[0]) return { reply: read };
  if (ttl?.[0]) return { reply: ttl };
  const value = read[1] as string | Buffer;
  if (value.length > bytes) return { reply: await tooLargeString(store, key) };
  const seconds = ttl?.[1] as number | undefined;
  if (value.length > 0) return seconds === -2 ? undefined : { value, ttl: seconds };
  const exists = ttl ? [null, seconds === -2 ? 0 : 1] : await plain(store, 'exists', key);
  if (exists[0]) return { reply: exists as Reply };
  return exists[1] === 0 ? { value: null } : undefined;
}

/** What a command asks when it is a whole string's read that needs no script: with its ETag ('1', '2') or not. */
function stringRead(command: Command): 'etag' | 'read' | undefined {
  const { name, args } = command;
  if (name === 'typedRead')
    return args.length === 2 && args[0] === 'string' && args[1] === 'GET' ? 'read' : undefined;
  if (name !== 'typedEtag' || args.length !== 3 || args[1] !== 'string' || args[2] !== 'GET')
    return undefined;
  const head = args[0];
  // No precondition: a check and the read must see the key at one moment (the script does that).
  return head === 'r0' ? 'read' : head === 'r1' || head === 'r2' ? 'etag' : undefined;
}

/**
 * The reply `command`'s script would give, without a script, or undefined when it needs one (a read bounded before
 * it is read, a precondition, an empty answer). GET /store/string/{key}: GETRANGE and TTL together, the ETag its
 * value's SHA-1; a field, a member, a count or a page: see smallRead.
 */
export async function plainRead(store: Store, command: Command): Promise<Reply | undefined> {
  const kind = stringRead(command);
  if (!kind) {
    const whole = wholeRead(command);
    if (whole) return readWhole(store, command, whole);
    if (command.name === 'typedEtag' && command.args[1] === 'zset') return zsetPage(store, command);
    const read = command.name === 'typedRead' && !SCRIPTED.has(String(command.args[1]));
    return read ? smallRead(store, command) : undefined;
  }
  const key = store.keyspace.user(command.keys[0] as string);
  const { bytes } = replyBudget(store.redis);
  const read = await boundedString(store, key, bytes, command.buffers === true, true);
  if (!read) return undefined;
  if ('reply' in read) return read.reply[0] ? wrongType(store, key, read.reply[0], 'string') : read.reply;
  const { value } = read;
  const reply = value === null ? null : [value, read.ttl];
  if (command.name === 'typedRead') return [null, reply];
  if (value === null || kind !== 'etag') return [null, [reply, null]];
  return [null, [reply, value.length < MEMO_MIN_BYTES ? stringEtag(value) : largeEtag(key, value)]];
}

/** typed_read's reads that need its logic: whole strings and collections sized before they are read, pages, slices. */
const SCRIPTED: ReadonlySet<string> = new Set(['GET', 'WHOLE', 'PAGE', 'LRANGE']);

/**
 * A typed read whose reply is small by construction (a field, a member, a count, a page of at most 1,000), as
 * typed_read answers it: the command and `TTL key` in one write (a key's existence or TTL alone: `TYPE` and `TTL`;
 * a hash field with its own TTL: `HGET`, `TTL` and `HTTL`); another type is Redis's WRONGTYPE; the reply is counted
 * against the budget after it is read, as typed_read's `spend` does. A TTL of -2 is a missing key. An empty reply of
 * a key that exists (or was written between the two commands) is undefined: the script, which sees both at once,
 * answers it.
 */
async function smallRead(store: Store, command: Command): Promise<Reply | undefined> {
  const [type, name, ...rest] = command.args;
  const key = store.keyspace.user(command.keys[0] as string);
  if (name === undefined) {
    const [[typeErr, actual], ttl] = (await together(store, [
      sent(store, 'type', key),
      sent(store, 'ttl', key),
    ])) as [Reply, Reply];
    if (typeErr || ttl[0]) return typeErr ? [typeErr, null] : ttl;
    if (actual === 'none' || ttl[1] === -2) return [null, null];
    return actual === type ? [null, [null, ttl[1]]] : [new ReplyError(`WRONGTYPE_OF ${actual}`), null];
  }
  // typed_read's 'FIELD': HGET, and HTTL in the same write.
  const field = name === 'FIELD';
  const method = `${field ? 'hget' : String(name).toLowerCase()}${command.buffers ? 'Buffer' : ''}`;
  const [read, ttl, fieldTtl] = (await together(store, [
    sent(store, method, key, ...rest),
    sent(store, 'ttl', key),
    field ? sent(store, 'httl', key, 'FIELDS', 1, ...rest) : undefined,
  ])) as [Reply, Reply, Reply | undefined];
  if (read[0]) return wrongType(store, key, read[0], type);
  if (ttl[0]) return ttl;
  if (ttl[1] === -2) return [null, null];
  if (empty(read[1])) return undefined;
  const [elements, bytes] = replySize(read[1]);
  const budget = replyBudget(store.redis);
  if (elements > budget.elements || bytes > budget.bytes)
    return [new ReplyError(`REPLY_TOO_LARGE ${elements} ${bytes}`), null];
  if (!fieldTtl) return [null, [read[1], ttl[1]]];
  // As the script: an HTTL the server refuses (a read built before the first probe answered) is -1.
  const [err, seconds] = fieldTtl;
  if (err && !refusalReason(err)) return fieldTtl;
  return [null, [read[1], ttl[1], err ? -1 : (seconds as number[])[0]]];
}

/** A whole hash or set read that needs no script: its command, and whether its ETag is answered (typed_etag's). */
type Whole = { readonly cmd: string; readonly size: 'HLEN' | 'SCARD'; readonly etag: boolean };

/**
 * typedRead's `type WHOLE cmd`, or typedEtag's `rN type WHOLE cmd` without a precondition. The ETag of HKEYS or
 * HVALS digests fields and values both: their script then (it reads the hash once more, atomically).
 */
function wholeRead(command: Command): Whole | undefined {
  const etag = command.name === 'typedEtag';
  if (!etag && command.name !== 'typedRead') return undefined;
  const { args } = command;
  const at = etag ? 1 : 0;
  const head = etag ? args[0] : 'r0';
  const type = args[at];
  const whole = args[at + 1];
  const cmd = args[at + 2];
  if (whole !== 'WHOLE' || args.length !== at + 3 || typeof head !== 'string' || head.length !== 2)
    return undefined;
  const tag = head !== 'r0';
  if (type === 'set' && cmd === 'SMEMBERS') return { cmd, size: 'SCARD', etag: tag };
  if (type !== 'hash' || (cmd !== 'HGETALL' && cmd !== 'HKEYS' && cmd !== 'HVALS')) return undefined;
  return tag && cmd !== 'HGETALL' ? undefined : { cmd, size: 'HLEN', etag: tag };
}

/**
 * typed.lua's etag_of of a hash (HGETALL's pairs) or a set (SMEMBERS): each pair (`<field length>:<field><value>`)
 * or member digested, sorted, then `hash:` or `set:` and the digests. `texts`, the items decoded, when each is
 * its bytes' exact UTF-8 decoding: a pair is then digested from one string (crypto.hash encodes it), not from a
 * Buffer concatenated for it.
 */
function collectionEtag(cmd: string, items: readonly Buffer[], texts?: readonly string[]): string {
  const digests: string[] = [];
  if (cmd === 'SMEMBERS') for (const member of items) digests.push(sha1(member));
  else if (texts)
    for (let i = 0; i + 1 < items.length; i += 2)
      digests.push(sha1(`${(items[i] as Buffer).length}:${texts[i]}${texts[i + 1]}`));
  else
    for (let i = 0; i + 1 < items.length; i += 2) {
      const field = items[i] as Buffer;
      digests.push(sha1(Buffer.concat([Buffer.from(`${field.length}:`), field, items[i + 1] as Buffer])));
    }
  sortSmall(digests);
  return sha1(`${cmd === 'SMEMBERS' ? 'set:' : 'hash:'}${digests.join('')}`);
}

/** Sorts strings as Array.prototype.sort does (by UTF-16 code units), in place: insertion sort, no work array. */
function sortSmall(strings: string[]): void {
  if (strings.length > 32) {
    strings.sort();
    return;
  }
  for (let i = 1; i < strings.length; i++) {
    const s = strings[i] as string;
    let j = i - 1;
    while (j >= 0 && (strings[j] as string) > s) {
      strings[j + 1] = strings[j] as string;
      j--;
    }
    strings[j + 1] = s;
  }
}

/**
 * Buffers decoded as text, and whether every one decoded exactly (no U+FFFD, which bytes that are not UTF-8
 * become; a text read holding one is read again as bytes: ops/encoding.ts Reread).
 */
function decoded(items: readonly Buffer[]): { texts: string[]; exact: boolean } {
  const texts: string[] = new Array(items.length);
  let exact = true;
  for (let i = 0; i < items.length; i++) {
    const text = (items[i] as Buffer).toString();
    if (exact && text.includes('\uFFFD')) exact = false;
    texts[i] = text;
  }
  return { texts, exact };
}

/**
 * A whole hash or set (HGETALL, HKEYS, HVALS, SMEMBERS) as typed_read answers it: in one write where Redis bounds
 * the read itself (boundedWhole), else in two (sizedWhole); WRONGTYPE is Redis's, a TTL of -2 with nothing read is no
 * key; more than UNPAGED_MAX is PAGE_REQUIRED, the element budget checked, the bytes counted after the read (as the
 * field reads' are: no MEMORY USAGE), the ETag digested here. A key deleted, emptied or grown past UNPAGED_MAX
 * between two commands is undefined: the script answers it.
 */
async function readWhole(store: Store, command: Command, whole: Whole): Promise<Reply | undefined> {
  const key = store.keyspace.user(command.keys[0] as string);
  const type = whole.size === 'HLEN' ? 'hash' : 'set';
  const read = BOUNDED[whole.cmd] && takesSetNxGet(store.redis) ? boundedWhole : sizedWhole;
  const got = await read(store, key, whole);
  if (!got || !('items' in got)) return got?.reply;
  const { items, ttl } = got;
  if (items instanceof Error) return wrongType(store, key, items, type);
  if (items.length === 0)
    return ttl === -2 ? [null, command.name === 'typedRead' ? null : [null, null]] : undefined;
  if (ttl === -2) return undefined;
  const budget = replyBudget(store.redis);
  const count = whole.cmd === 'HGETALL' ? items.length / 2 : items.length;
  if (count > UNPAGED_MAX) {
    const [err, n] = await plain(store, whole.size.toLowerCase(), key);
    if (err) return [err, null];
    return (n as number) > UNPAGED_MAX ? [new ReplyError(`PAGE_REQUIRED ${n}`), null] : undefined;
  }
  if (items.length > budget.elements) return [new ReplyError(`REPLY_TOO_LARGE ${items.length} 0`), null];
  const [elements, bytes] = replySize(items);
  if (elements > budget.elements || bytes > budget.bytes)
    return [new ReplyError(`REPLY_TOO_LARGE ${elements} ${bytes}`), null];
  if (command.buffers) {
    const reply = [items, ttl];
    if (command.name === 'typedRead') return [null, reply];
    return [null, [reply, whole.etag ? collectionEtag(whole.cmd, items) : null]];
  }
  const { texts, exact } = decoded(items);
  const reply = [texts, ttl];
  if (command.name === 'typedRead') return [null, reply];
  return [null, [reply, whole.etag ? collectionEtag(whole.cmd, items, exact ? texts : undefined) : null]];
}

/** A whole read's items (or its error) and TTL; or a reply already known; undefined: its script answers. */
type WholeRead = { items: Buffer[] | Error; ttl: number } | { reply: Reply } | undefined;

/**
 * The one command that reads a whole hash or set and is bounded by Redis itself: `HRANDFIELD key 1001 [WITHVALUES]`
 * and `SRANDMEMBER key 1001` answer the whole key, in HGETALL's / SMEMBERS's order, when it holds at most 1,001,
 * and 1,001 of them otherwise (then its size is asked, for PAGE_REQUIRED). HVALS has none. Redis 6.2+ (HRANDFIELD):
 * taken where the capability probe found Redis 7 or Valkey.
 */
const BOUNDED: Record<string, (string | number)[] | undefined> = {
  HGETALL: ['HRANDFIELD', UNPAGED_MAX + 1, 'WITHVALUES'],
  HKEYS: ['HRANDFIELD', UNPAGED_MAX + 1],
  SMEMBERS: ['SRANDMEMBER', UNPAGED_MAX + 1],
};

/** One write: the bounded read (BOUNDED) and `TTL key`. */
async function boundedWhole(store: Store, key: string, whole: Whole): Promise<WholeRead> {
  const [name, ...args] = BOUNDED[whole.cmd] as [string, ...(string | number)[]];
  const [read, ttl] = (await together(store, [
    sentBuffers(store, name, key, ...args),
    sent(store, 'ttl', key),
  ])) as [Reply, Reply];
  if (ttl[0] && !read[0]) return { reply: ttl };
  return { items: read[0] ?? (read[1] as Buffer[]), ttl: ttl[1] as number };
}

/**
 * Two writes: the size first (HLEN / SCARD), refused above UNPAGED_MAX or the element budget before anything is
 * read, then the read and `TTL key`.
 */
async function sizedWhole(store: Store, key: string, whole: Whole): Promise<WholeRead> {
  const [sizeErr, size] = await plain(store, whole.size.toLowerCase(), key);
  if (sizeErr) return { items: sizeErr, ttl: 0 };
  const n = size as number;
  if (n === 0) return { items: [], ttl: -2 };
  if (n > UNPAGED_MAX) return { reply: [new ReplyError(`PAGE_REQUIRED ${n}`), null] };
  const wanted = whole.cmd === 'HGETALL' ? 2 * n : n;
  if (wanted > replyBudget(store.redis).elements)
    return { reply: [new ReplyError(`REPLY_TOO_LARGE ${wanted} 0`), null] };
  const [read, ttl] = (await together(store, [
    sentBuffers(store, whole.cmd, key),
    sent(store, 'ttl', key),
  ])) as [Reply, Reply];
  if (ttl[0] && !read[0]) return { reply: ttl };
  return { items: read[0] ?? (read[1] as Buffer[]), ttl: ttl[1] as number };
}
