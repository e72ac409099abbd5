// A sorted set's page by rank with its ETag, without a script (issue 36): GET /store/zset/{key} reads its page, TTL
// and size in one write; the ETag of a set of at most 128 members is digested here as typed.lua's etag_of digests
// it (cjson's JSON of ZRANGE 0 -1 WITHSCORES), from the page when it holds the whole set, else from a whole read.
import { ReplyError } from 'ioredis';
import type { Command } from '../ops/op';
import { type Reply, replyBudget } from '../redis/client';
import type { Store } from '../redis/store';
import { replySize, sent, sentBuffers, sha1, together, wrongType } from './plain-command';

/** typed.lua's ETAG_MAX_ELEMENTS: a page answers its ETag unasked when the set has at most this many members. */
const ETAG_MAX_ELEMENTS = 128;

/** cjson's escapes (Redis's lua_cjson char2escape): control bytes, '"', '/', '\' and 0x7f; other bytes as they are. */
const ESCAPES: (Buffer | undefined)[] = Array.from({ length: 256 }, (_, byte) => {
  const named: Record<number, string> = { 8: '\\b', 9: '\\t', 10: '\\n', 12: '\\f', 13: '\\r' };
  if (byte < 32 || byte === 127)
    return Buffer.from(named[byte] ?? `\\u${byte.toString(16).padStart(4, '0')}`);
  if (byte === 34 || byte === 47 || byte === 92) return Buffer.from(`\\${String.fromCharCode(byte)}`);
  return undefined;
});

/** `cjson.encode` of an array of strings, as bytes: `["a","b"]`. */
export function cjsonArray(items: readonly Buffer[]): Buffer {
  const parts: Buffer[] = [Buffer.from('[')];
  items.forEach((item, i) => {
    parts.push(Buffer.from(i === 0 ? '"' : ',"'));
    let from = 0;
    for (let j = 0; j < item.length; j++) {
      const escaped = ESCAPES[item[j] as number];
      if (!escaped) continue;
      parts.push(item.subarray(from, j), escaped);
      from = j + 1;
    }
    parts.push(item.subarray(from), Buffer.from('"'));
  });
  parts.push(Buffer.from(']'));
  return Buffer.concat(parts);
}

/** etag_of of a sorted set from ZRANGE key 0 -1 WITHSCORES (members and scores, in order). */
export const zsetEtag = (all: readonly Buffer[]): string =>
  sha1(Buffer.concat([Buffer.from('zset:'), cjsonArray(all)]));

/** The page `typedEtag rN zset ZRANGE start stop [REV] WITHSCORES` asks without a precondition, or undefined. */
function rankPage(
  command: Command,
): { start: number; stop: number; rev: boolean; answer: string } | undefined {
  if (command.name !== 'typedEtag') return undefined;
  const { args } = command;
  const [head, type, name, start, stop] = args;
  if (type !== 'zset' || name !== 'ZRANGE' || typeof head !== 'string' || head.length !== 2) return undefined;
  if (head[0] !== 'r' || (head[1] !== '1' && head[1] !== '2')) return undefined;
  // After the stop: WITHSCORES, or REV WITHSCORES.
  const rev = args.length === 7 && args[5] === 'REV';
  if (args[args.length - 1] !== 'WITHSCORES' || (args.length !== 6 && !rev)) return undefined;
  const [from, to] = [Number(start), Number(stop)];
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to < from) return undefined;
  return { start: from, stop: to, rev, answer: head[1] };
}

/** The page `page` of a sorted set from all its members with their scores (ascending), reversed for REV. */
function cut(all: readonly Buffer[], page: { start: number; stop: number; rev: boolean }): Buffer[] {
  const pairs = Array.from({ length: all.length / 2 }, (_, i) => [all[2 * i], all[2 * i + 1]] as Buffer[]);
  if (page.rev) pairs.reverse();
  return pairs.slice(page.start, page.stop + 1).flat();
}

/**
 * typed_etag's reply to a sorted set's page by rank, or undefined (its script answers). The page, `TTL key` and
 * `ZCARD key` go in one write. A page from rank 0 that stops short holds the whole set: its ETag is digested from it.
 * Past 128 members no ETag is answered unasked ('2': the page alone answers), and one asked for ('1') takes the
 * script. Otherwise the whole set (`ZRANGE key 0 128 WITHSCORES` and `TTL key`, a second write) gives both the ETag
 * and the page cut from it: body and ETag always come from one read. The page is counted against the reply budget
 * after it is read. A missing key is a TTL of -2 with no members; an empty page of a key that exists takes the script.
 */
export async function zsetPage(store: Store, command: Command): Promise<Reply | undefined> {
  const page = rankPage(command);
  if (!page) return undefined;
  const key = store.keyspace.user(command.keys[0] as string);
  const [read, ttl, card] = (await together(store, [
    page.rev
      ? sentBuffers(store, 'ZRANGE', key, page.start, page.stop, 'REV', 'WITHSCORES')
      : sentBuffers(store, 'ZRANGE', key, page.start, page.stop, 'WITHSCORES'),
    sent(store, 'ttl', key),
    sent(store, 'zcard', key),
  ])) as [Reply, Reply, Reply];
  if (read[0]) return wrongType(store, key, read[0], 'zset');
  if (ttl[0] || card[0]) return ttl[0] ? ttl : card;
  let items = read[1] as Buffer[];
  let seconds = ttl[1] as number;
  if (items.length === 0) return seconds === -2 ? [null, [null, null]] : undefined;
  if (seconds === -2) return undefined;
  const members = items.length / 2;
  let etag: string | null = null;
  if (page.start === 0 && members < page.stop + 1) {
    // The whole set: ascending for the digest.
    if (members <= ETAG_MAX_ELEMENTS || page.answer === '1')
      etag = zsetEtag(page.rev ? cut(items, { start: 0, stop: members, rev: true }) : items);
  } else if ((card[1] as number) > ETAG_MAX_ELEMENTS) {
    if (page.answer === '1') return undefined;
  } else {
    const [whole, again] = (await together(store, [
      sentBuffers(store, 'ZRANGE', key, 0, ETAG_MAX_ELEMENTS, 'WITHSCORES'),
      sent(store, 'ttl', key),
    ])) as [Reply, Reply];
    if (whole[0]) return wrongType(store, key, whole[0], 'zset');
    if (again[0] || again[1] === -2) return again[0] ? again : undefined;
    const all = whole[1] as Buffer[];
    if (all.length > 2 * ETAG_MAX_ELEMENTS) {
      if (page.answer === '1') return undefined;
    } else {
      [items, seconds, etag] = [cut(all, page), again[1] as number, zsetEtag(all)];
      if (items.length === 0) return undefined;
    }
  }
  const [elements, bytes] = replySize(items);
  const budget = replyBudget(store.redis);
  if (elements > budget.elements || bytes > budget.bytes)
    return [new ReplyError(`REPLY_TOO_LARGE ${elements} ${bytes}`), null];
  const value = command.buffers ? items : items.map((item) => item.toString());
  return [null, [[value, seconds], etag]];
}
