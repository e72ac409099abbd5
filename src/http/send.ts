// Writes a JSON response without Express's res.json extras (no ETag hashing, no content sniffing).
import type { Response } from 'express';
import { noneMatch } from '../ops/etag';
import type { Outcome } from '../ops/op';

export function sendJson(res: Response, status: number, body: unknown): void {
  sendJsonText(res, status, JSON.stringify(body));
}

/** A JSON answer already serialized. */
export function sendJsonText(res: Response, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** An outcome answered as raw bytes (GET /store/string/{key} with Accept: application/octet-stream), ETag included. */
export function sendBytes(res: Response, outcome: Outcome, ifNoneMatch: string | undefined): void {
  const bytes = outcome.bytes as Buffer;
  if (outcome.etag !== undefined) {
    res.setHeader('etag', outcome.etag);
    if (ifNoneMatch !== undefined && noneMatch(ifNoneMatch, outcome.etag)) {
      res.statusCode = 304;
      res.end();
      return;
    }
  }
  res.statusCode = outcome.status;
  res.setHeader('Content-Type', 'application/octet-stream');
  res.setHeader('Content-Length', bytes.length);
  res.end(bytes);
}

/**
 * An outcome with the key's ETag (ops/etag.ts): the header, and for a read whose If-None-Match matches it
 * `304 Not Modified` with no body (the client's copy is current).
 */
export function sendTagged(res: Response, outcome: Outcome, ifNoneMatch: string | undefined): void {
  // Written in lower case (header names are case-insensitive): 'ETag' measured about 1 ms more of this
  // process's CPU per 1 MiB response than 'etag' or another name (Node 20; bench/ab.ts, docs/performance.md).
  res.setHeader('etag', outcome.etag as string);
  if (ifNoneMatch === undefined || !noneMatch(ifNoneMatch, outcome.etag as string)) {
    sendJson(res, outcome.status, outcome.body);
    return;
  }
  res.statusCode = 304;
  res.end();
}
