// The opaque cursor of a key listing: which master of the walk, SCAN's cursor there, and where in its reply to resume.
import { createHash } from 'node:crypto';
import { ApiError } from '../errors';

export interface ScanPosition {
  /** Index of the master in the sorted list of masters (see `masters` in scan.ts). */
  node: number;
  /** SCAN's cursor on that master: a decimal string, as Redis gives it (it may exceed 2^53). */
  cursor: string;
  /**
   * The SCAN reply from `cursor` gave more keys than the page took (Valkey gives many more than COUNT): the next
   * page sends the same SCAN again (the same COUNT), orders its keys by tag as the first page did, and goes on after
   * the last key it took (`last`, its tag). The order is the tags', not the reply's: a reply sent again while Redis
   * rehashes its table holds the same keys in another order. The cursor stays small whatever SCAN returns per call:
   * no key rides in it.
   */
  resume?: { count: number; last: string };
}

/** The largest SCAN COUNT a page sends (its `limit`). */
const MAX_COUNT = 1000;
const TAG = /^[A-Za-z0-9_-]{8}$/;

/** The tag of a key (as Redis stores it) a resumed page looks for: 48 bits of its SHA-1, base64url. */
export const keyTag = (redisKey: string): string =>
  createHash('sha1').update(redisKey).digest('base64url').slice(0, 8);

/** base64url of JSON: opaque to clients, so its shape can change without breaking them. */
export function encodeCursor(position: ScanPosition): string {
  const { node, cursor, resume } = position;
  const parts = resume ? [node, cursor, resume.count, resume.last] : [node, cursor];
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

/**
 * The JSON a cursor encodes, read strictly: Node's base64url decoder skips characters outside the alphabet and
 * stops at padding (`WzAsIjE3OTIiXQ=X` decodes as `WzAsIjE3OTIiXQ`), so a cursor that does not re-encode to itself
 * is refused rather than read as another. undefined when it is not base64url of JSON.
 */
export function cursorJson(text: string): unknown {
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.toString('base64url') !== text) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

export function decodeCursor(text: string | undefined): ScanPosition {
  if (text === undefined || text === '') return { node: 0, cursor: '0' };
  const value = cursorJson(text);
  if (
    Array.isArray(value) &&
    (value.length === 2 || (value.length === 4 && validResume(value[2], value[3]))) &&
    Number.isSafeInteger(value[0]) &&
    value[0] >= 0 &&
    typeof value[1] === 'string' &&
    /^\d{1,20}$/.test(value[1]) &&
    // Redis refuses a cursor beyond 64 bits ('invalid cursor'): a client error, not a 500.
    BigInt(value[1]) < 2n ** 64n
  ) {
    const position: ScanPosition =
      value.length === 4
        ? { node: value[0], cursor: value[1], resume: { count: value[2], last: value[3] } }
        : { node: value[0], cursor: value[1] };
    // The same JSON written otherwise (spaces, a cursor of leading zeros) is another text than ours.
    if (encodeCursor(position) === text) return position;
  }
  throw new ApiError(
    'invalid_request',
    "cursor is not a cursor this service gave: pass the 'cursor' of the previous page unchanged, or none to start",
  );
}

function validResume(count: unknown, last: unknown): boolean {
  return (
    Number.isSafeInteger(count) &&
    (count as number) >= 1 &&
    (count as number) <= MAX_COUNT &&
    typeof last === 'string' &&
    TAG.test(last)
  );
}
