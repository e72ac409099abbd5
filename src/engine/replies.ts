// The one place where Redis error replies become API errors: our scripts' codes, Redis's own refusals.
import { ApiError, noFieldExpiry, REDIS_RETRY_AFTER, toApiError } from '../errors';
import { preconditionFailed, unwrapped } from '../ops/etag';
import type { Command } from '../ops/op';
import { UNPAGED_MAX } from '../redis/client';

/** The one place where Redis error replies become API errors. */
export function replyError(err: Error, wrapped: Command): ApiError {
  // A command under If-Match (etag.ts) reads as the command it wraps.
  const command = unwrapped(wrapped);
  const key = command.keys[0] ?? '';
  const [code, actual] = err.message.split(' ', 2);
  if (code === 'PRECONDITION_FAILED') return preconditionFailed(key, actual as string);
  if (code === 'WRONGTYPE_OF') {
    return new ApiError('wrong_type', `Key '${key}' holds a ${actual}, not a ${command.args[0]}`, {
      details: { key, type: actual },
    });
  }
  if (code === 'WRONGTYPE') return new ApiError('wrong_type', `Key '${key}' holds another type of value`);
  if (code === 'KEY_EXISTS') return new ApiError('key_exists', `Key '${key}' already exists`);
  // typed_write's own check, for a write built before the first capability probe answered (ops/hashes.ts).
  if (code === 'NO_FIELD_TTL') return noFieldExpiry();
  if (code === 'NOT_A_NUMBER') return notANumber(err.message, command);
  if (code === 'PAGE_REQUIRED' || code === 'REPLY_TOO_LARGE') return tooLarge(err.message, key);
  // Cluster, change feed on: the stream named by a stale slot map is not on the key's node; nothing was written.
  if (code === 'FEED_ELSEWHERE') {
    return new ApiError(
      'service_unavailable',
      'The Redis Cluster is moving slots; nothing was written, retry shortly',
      {
        retryAfter: REDIS_RETRY_AFTER,
      },
    );
  }
  // LSET beyond the end of a list (typed_write answers the command's own error); its index follows 'LSET'.
  if (err.message === 'ERR index out of range') {
    const index = command.args[command.args.indexOf('LSET') + 1];
    return new ApiError('index_not_found', `Index ${index} is out of range of list '${key}'`);
  }
  return toApiError(err);
}

/**
 * typed.lua refused a read: a whole hash or set above UNPAGED_MAX ("PAGE_REQUIRED <size>"), or a request whose reads
 * go past the reply budget ("REPLY_TOO_LARGE <elements> <bytes>"). A batch refused whole (several keys) has no key.
 */
export function tooLarge(message: string, key = ''): ApiError {
  const [code, a, b] = message.split(' ');
  if (code === 'PAGE_REQUIRED') {
    return new ApiError(
      'reply_too_large',
      `Key '${key}' holds ${a} elements; a whole read answers at most ${UNPAGED_MAX}: read it in pages with the query parameters 'cursor' and 'limit' (at most 1000 per page)`,
      { details: { key, size: Number(a), max: UNPAGED_MAX } },
    );
  }
  return new ApiError(
    'reply_too_large',
    `This request would read at least ${a} elements or ${b} bytes from Redis; the limits are SVC_MAX_REPLY_ELEMENTS and SVC_MAX_REPLY_BYTES per request: read fewer or smaller keys per request, or page`,
    { details: { elements: Number(a), bytes: Number(b) } },
  );
}

/** INCRBY and co. refused: the stored value is not a number of the kind asked for, or the result is out of range. */
function notANumber(message: string, command: Command): ApiError {
  const [type, , cmd, field, member] = command.args;
  const key = command.keys[0];
  if (type === 'zset') {
    const name = String(member).slice(0, 100);
    return new ApiError(
      'not_a_number',
      `The score of member '${name}' of sorted set '${key}' cannot be incremented: the result would be NaN (inf - inf)`,
    );
  }
  const where = type === 'hash' ? `Field '${String(field).slice(0, 100)}' of hash '${key}'` : `Key '${key}'`;
  const cause = /overflow|NaN|Infinity/.test(message)
    ? 'the result would be out of range (a 64-bit integer, or a finite number)'
    : /integer/.test(message)
      ? `it does not hold an integer (${cmd} needs one; a fractional 'by' increments any number)`
      : 'it does not hold a number';
  return new ApiError('not_a_number', `${where} cannot be incremented: ${cause}`);
}
