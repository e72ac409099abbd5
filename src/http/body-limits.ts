// Limits on a request body besides its parsed content: size before and while it is read, JSON nesting, UTF-8.
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import express, { type NextFunction, type RequestHandler } from 'express';
import { ApiError } from '../errors';

/** Deepest nesting of arrays and objects in a body (the body object itself is level 1). */
export const MAX_JSON_DEPTH = 64;

const tooLarge = (limit: number, what: string) =>
  // Connection: close, so that Node does not read the rest of the body to keep the connection (errors.ts).
  new ApiError('payload_too_large', `Request body ${what} exceeds the limit of ${limit} bytes`, {
    headers: { Connection: 'close' },
  });

/**
 * Refuses a Content-Length over the limit before anything is read: body-parser would read (and discard) the
 * whole announced body before it answers.
 */
export function refuseOversizedBody(limit: number): RequestHandler {
  return (req, _res, next) => {
    const length = Number(req.headers['content-length'] ?? 0);
    if (length > limit) throw tooLarge(limit, `of ${length} bytes (Content-Length)`);
    next();
  };
}

/**
 * The index of the quote that ends a JSON string whose text starts at `from` (the one not escaped: an even run of
 * backslashes before it), or the buffer's length. Strings are skipped with indexOf, not byte by byte: a 1 MiB
 * value costs ~50 µs instead of ~4 ms. No byte of a multi-byte UTF-8 character is a quote or a backslash.
 */
function stringEnd(buf: Buffer, from: number): number {
  for (;;) {
    const quote = buf.indexOf(0x22, from);
    if (quote < 0) return buf.length;
    let before = quote - 1;
    while (buf[before] === 0x5c) before--;
    if ((quote - 1 - before) % 2 === 0) return quote;
    from = quote + 1;
  }
}

/** Whether arrays and objects nest deeper than `limit`: one pass over the bytes, strings skipped. */
export function nestsDeeperThan(buf: Buffer, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (c === 0x22) i = stringEnd(buf, i + 1);
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** body-parser's verify hook: runs on the raw bytes before JSON.parse (which would turn bad UTF-8 into U+FFFD). */
function verifyJson(_req: IncomingMessage, _res: unknown, buf: Buffer, encoding: string | null): void {
  if (encoding !== 'utf-8')
    throw new ApiError('unsupported_media_type', 'Request body must be UTF-8 encoded application/json');
  if (!isUtf8(buf)) throw new ApiError('invalid_value', 'Request body is not valid UTF-8');
  if (nestsDeeperThan(buf, MAX_JSON_DEPTH))
    throw new ApiError(
      'invalid_value',
      `Request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels (the limit)`,
    );
}

/**
 * express.json with the checks above, and a chunked body refused as soon as it crosses the limit: body-parser
 * notices too, but answers only once the client has sent the whole body.
 */
export function jsonBody(limit: number): RequestHandler {
  const parse = express.json({ limit, type: ['application/json', 'application/*+json'], verify: verifyJson });
  return (req, res, next) => {
    let done = false;
    const once: NextFunction = (err?: unknown) => {
      if (done) return;
      done = true;
      next(err);
    };
    parse(req, res, once);
    // body-parser reads synchronously from here on: a 'data' listener added now sees the same chunks.
    if (done || req.headers['content-length'] !== undefined || !req.readableFlowing) return;
    let received = 0;
    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= limit) return;
      req.off('data', count);
      once(tooLarge(limit, 'sent in chunks'));
    };
    req.on('data', count);
  };
}
