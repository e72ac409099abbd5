// The Idempotency-Key request header (draft-ietf-httpapi-idempotency-key-header) -> what ops/idempotent.ts needs.
import { createHash, randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { ApiError } from '../errors';
import type { Idempotency } from '../ops/idempotent';
import { principalOf } from './auth/access';
import type { Context } from './context';

/** 1 to 255 visible ASCII characters, optionally as a structured-field string ("..."), as the draft writes it. */
const KEY = /^[\x21-\x7e]{1,255}$/;

const sha256 = (...parts: (string | Buffer)[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\n');
  return hash.digest('hex');
};

/**
 * The request's Idempotency-Key, scoped to its credential (its id; the client address for an anonymous caller), or
 * undefined without the header. The fingerprint covers what makes two requests the same request.
 */
export function idempotencyOf(ctx: Context, req: Request, res: Response): Idempotency | undefined {
  const header = req.get('idempotency-key');
  if (header === undefined) return undefined;
  const key =
    header.length > 1 && header.startsWith('"') && header.endsWith('"') ? header.slice(1, -1) : header;
  if (!KEY.test(key)) {
    throw new ApiError(
      'invalid_request',
      'Idempotency-Key must be 1 to 255 visible ASCII characters (e.g. a UUID), optionally in double quotes',
    );
  }
  const principal = principalOf(res);
  const scope =
    !principal || principal.scheme === 'none' ? `address ${req.ip}` : `${principal.scheme} ${principal.id}`;
  const body = Buffer.isBuffer(req.body) ? req.body : JSON.stringify(req.body ?? null);
  const conditions = `${req.get('if-match') ?? ''}\n${req.get('if-none-match') ?? ''}`;
  const { store, config } = ctx;
  return {
    digest: sha256(scope, store.keyspace.prefix, key),
    fingerprint: sha256(req.method, req.originalUrl, conditions, req.get('content-type') ?? '', body),
    token: randomUUID(),
    ttlMs: config.idempotencyTtlSeconds * 1000,
    // The longest a request may run: a list pop's wait, a write waiting for replicas, the command deadline.
    lockMs: (config.limits.listMaxWait + 5) * 1000 + store.deadlineMs + (store.durable?.deadlineMs ?? 0),
    replayed: false,
  };
}

/** Marks a replayed answer, error answers included. */
export function markReplay(res: Response, idem: Idempotency | undefined): void {
  if (idem?.replayed) res.setHeader('Idempotent-Replayed', 'true');
}
