// The opaque cursor of a key listing: which master of the walk, and SCAN's cursor there.
import { ApiError } from '../errors';

export interface ScanPosition {
  /** Index of the master in the sorted list of masters (see `masters` in scan.ts). */
  node: number;
  /** SCAN's cursor on that master: a decimal string, as Redis gives it (it may exceed 2^53). */
  cursor: string;
  /**
   * Keys a SCAN reply gave beyond the page's `limit` (user keys, without SVC_KEY_PREFIX), on the master of index
   * `pendingNode`: the next page starts with them, so that a page never holds more than its `limit`.
   */
  pending?: { node: number; keys: string[] };
}

/** Keys carried by one cursor, at most (a SCAN reply exceeds its COUNT by a few keys of one hash bucket). */
const MAX_PENDING = 1000;
const USER_KEY = /^[A-Za-z0-9_.:-]{1,1024}$/;

/** base64url of JSON: opaque to clients, so its shape can change without breaking them. */
export function encodeCursor(position: ScanPosition): string {
  const { node, cursor, pending } = position;
  const parts = pending ? [node, cursor, pending.node, pending.keys] : [node, cursor];
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
    (value.length === 2 || (value.length === 4 && validPending(value[2], value[3]))) &&
    Number.isSafeInteger(value[0]) &&
    value[0] >= 0 &&
    typeof value[1] === 'string' &&
    /^\d{1,20}$/.test(value[1]) &&
    // Redis refuses a cursor beyond 64 bits ('invalid cursor'): a client error, not a 500.
    BigInt(value[1]) < 2n ** 64n
  ) {
    const position: ScanPosition =
      value.length === 4
        ? { node: value[0], cursor: value[1], pending: { node: value[2], keys: value[3] } }
        : { node: value[0], cursor: value[1] };
    // The same JSON written otherwise (spaces, a cursor of leading zeros) is another text than ours.
    if (encodeCursor(position) === text) return position;
  }
  throw new ApiError(
    'invalid_request',
    "cursor is not a cursor this service gave: pass the 'cursor' of the previous page unchanged, or none to start",
  );
}

function validPending(node: unknown, keys: unknown): boolean {
  return (
    Number.isSafeInteger(node) &&
    (node as number) >= 0 &&
    Array.isArray(keys) &&
    keys.length > 0 &&
    keys.length <= MAX_PENDING &&
    keys.every((k) => typeof k === 'string' && USER_KEY.test(k))
  );
}
