// Pages of a hash or set (HSCAN / SSCAN in typed.lua's scan_page): the opaque cursor and the page read.
import { decodeCanonical } from '../base64';
import { ApiError } from '../errors';
import { type Op, type ReadReply, readOp } from './op';

/** `cursor`/`limit` of a page read; neither given: the whole key (refused above UNPAGED_MAX, see redis/client.ts). */
export interface PageInput {
  cursor?: string;
  limit?: number;
}

/** The default and largest `limit` of a hash or set page (openapi.yaml's CollectionLimit). */
export const PAGE_LIMIT = { default: 1000, max: 1000 } as const;

export const paged = ({ cursor, limit }: PageInput) => cursor !== undefined || limit !== undefined;

/** base64url of JSON [SCAN cursor, skip]: opaque to clients, so that its shape can change. */
const encode = (scan: string, skip: string) =>
  Buffer.from(JSON.stringify([scan, skip])).toString('base64url');

function decode(text: string | undefined): [string, string] {
  if (text === undefined || text === '') return ['0', '0'];
  let value: unknown;
  try {
    // Canonical base64url only: Node's decoder would skip junk (`WyIwIiwiMiJd!`).
    value = JSON.parse(decodeCanonical(text, true)?.toString('utf8') ?? '');
  } catch {
    value = undefined;
  }
  if (
    Array.isArray(value) &&
    value.length === 2 &&
    value.every((part) => typeof part === 'string' && /^\d{1,20}$/.test(part)) &&
    // Redis refuses a SCAN cursor beyond 64 bits: a client error, not a 500. The skip is any count (a compact key's
    // one SCAN step holds as many elements as Redis's listpack settings allow).
    BigInt(value[0]) < 2n ** 64n
  )
    return value as [string, string];
  throw new ApiError(
    'invalid_request',
    "cursor is not a cursor this service gave: pass the 'cursor' of the previous page unchanged, or none to start",
  );
}

/** What a page answers besides its elements: where the next one starts, and whether the walk is done. */
export interface Page {
  items: string[];
  /** The key's size (HLEN / SCARD). */
  size: number;
  ttl: number;
  cursor: string;
  complete: boolean;
}

/** One page of `key` (a hash with HSCAN: field, value, ...; a set with SSCAN), or 404 when the key is missing. */
export function pageOp(
  type: 'hash' | 'set',
  key: string,
  { cursor, limit = PAGE_LIMIT.default }: PageInput,
  result: (page: Page | null) => ReturnType<Op['result']>,
): Op {
  const [scan, skip] = decode(cursor);
  const command = type === 'hash' ? 'HSCAN' : 'SSCAN';
  return readOp(
    type,
    key,
    (reply: ReadReply) => {
      if (reply === null) return result(null);
      const [[next, nextSkip, items, size], ttl] = reply as [[string, string, string[], number], number];
      const complete = next === '0' && nextSkip === '0';
      return result({ items, size, ttl, complete, cursor: complete ? '' : encode(next, nextSkip) });
    },
    'PAGE',
    command,
    scan,
    skip,
    limit,
  );
}
