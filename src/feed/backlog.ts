// Reads the feed's stream from a resume point: pages of events, and whether events after that point were trimmed.
import { ApiError } from '../errors';
import type { RedisClient } from '../redis/client';
import type { Position } from './cursor';
import { type ChangeEvent, compareIds, eventsOf, MAX_ID_PART, type StreamEntry } from './event';

/** Entries per XRANGE. */
export const PAGE = 1_000;

export interface BacklogPage {
  readonly events: ChangeEvent[];
  /** The id of the last entry read (the resume point when there was none). */
  readonly next: string;
  /** More entries may follow at once. */
  readonly more: boolean;
  /**
   * Redis's clock (ms) when the page was read: every event written later has an id of at least `time`-0. Absent
   * when the stream does not exist (nobody wrote yet: '0-0' is then the resume point).
   */
  readonly time?: number;
}

/** The largest id before `time`-0: a resume point after every event written before `time`, naming none of them. */
export const before = (time: number): string => `${time - 1}-${MAX_ID_PART}`;

/** XINFO STREAM's flat reply [name, value, ...] as a map. */
function info(reply: unknown): Map<string, unknown> {
  const list = reply as unknown[];
  const fields = new Map<string, unknown>();
  for (let i = 0; i + 1 < list.length; i += 2) fields.set(String(list[i]), list[i + 1]);
  return fields;
}

/**
 * The id the stream ends at ('0-0' when it does not exist): following from it gives what is written next. XINFO
 * goes in a MULTI behind a command that names the stream plainly: a Cluster client does not find the key of XINFO
 * STREAM (it sends it to any node, and does not follow the MOVED), but routes a MULTI by its first key.
 */
export async function currentEnd(redis: RedisClient, stream: string): Promise<string> {
  const replies = await redis.multi().exists(stream).xinfo('STREAM', stream).exec();
  if (!replies) throw new Error('MULTI was aborted');
  const [[existsErr, exists] = [null, 0], [infoErr, infoReply] = [null, null]] = replies;
  if (existsErr) throw existsErr;
  if (exists === 0) return '0-0';
  if (infoErr) throw infoErr;
  return String(info(infoReply).get('last-generated-id') ?? '0-0');
}

/** Where each of `streams` ends now: following from there gives what is written next. */
export async function currentEnds(redis: RedisClient, streams: readonly string[]): Promise<Position> {
  const ends = await Promise.all(streams.map((stream) => currentEnd(redis, stream)));
  return new Map(streams.map((stream, i) => [stream, ends[i] as string]));
}

/**
 * Whether events after `since` may have been removed. Redis 7.0 does not record the last id a MAXLEN trim removed
 * (max-deleted-entry-id covers XDEL only), so: once any entry was trimmed (entries-added > length), a resume point
 * before the oldest entry kept counts as lost. That is exact but for a client whose last event was itself the last
 * one trimmed (a reset it did not need: safe, and rare with a retention that outlasts reconnects).
 */
function lost(fields: Map<string, unknown>, since: string): boolean {
  const deleted = String(fields.get('max-deleted-entry-id') ?? '0-0');
  if (compareIds(deleted, since) > 0) return true;
  const trimmed = Number(fields.get('entries-added') ?? 0) > Number(fields.get('length') ?? 0);
  const first = String(fields.get('recorded-first-entry-id') ?? '0-0');
  return trimmed && compareIds(since, first) < 0;
}

/**
 * The entries after `since` (at most PAGE) and, in the same MULTI, what the stream has trimmed: when events after
 * `since` may be gone, the client must start again (`reset`, see `lost`). A stream that does
 * not exist when `since` is not '0-0' was dropped without the service (a FLUSHDB by another client): reset too. A
 * flush through the service leaves a `flush` event in the new stream, which the client reads next instead.
 */
export async function readPage(
  redis: RedisClient,
  stream: string,
  since: string,
): Promise<BacklogPage | 'reset'> {
  const replies = await redis
    .multi()
    .xrange(stream, `(${since}`, '+', 'COUNT', PAGE)
    .xinfo('STREAM', stream)
    .time()
    .exec();
  if (!replies) throw new Error('MULTI was aborted');
  const [[rangeErr, entries] = [null, []], [infoErr, infoReply] = [null, null], [, clock] = [null, []]] =
    replies;
  const [seconds = 0, micros = 0] = (clock as [string, string]).map(Number);
  const time = seconds * 1000 + Math.floor(micros / 1000);
  if (rangeErr) throw rangeErr;
  if (infoErr) {
    if (!/no such key/i.test(infoErr.message)) throw infoErr;
    return since === '0-0' ? { events: [], next: since, more: false } : 'reset';
  }
  if (lost(info(infoReply), since)) return 'reset';
  const list = entries as StreamEntry[];
  const last = list[list.length - 1];
  return { events: eventsOf(stream, list), next: last ? last[0] : since, more: list.length === PAGE, time };
}

/** The long-poll's 410 and the reset message of SSE and WebSocket: the same words. */
export function resetMessage(since: string): string {
  return (
    `Events after '${since}' are no longer kept (SVC_CHANGES_MAXLEN, or the data was flushed outside the service): ` +
    're-read the keys you follow, then follow the feed from now on'
  );
}

export function resetError(since: string, next: string): ApiError {
  return new ApiError('changes_reset', resetMessage(since), { details: { since, next } });
}
