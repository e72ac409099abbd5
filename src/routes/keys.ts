// Key discovery: GET /store/keys (a page of a SCAN walk), GET and DELETE /store/keys/{key} (a key of any type),
// GET /store/whoami (the caller's credential).
import type { Response } from 'express';
import { ApiError, notFound } from '../errors';
import { principalOf } from '../http/auth/access';
import type { Principal } from '../http/auth/principal';
import type { Context } from '../http/context';
import type { Routes } from '../http/routes';
import { sendJson } from '../http/send';
import { ifMatchCondition } from '../ops/etag';
import { ok } from '../ops/op';
import { decodeCursor, encodeCursor } from '../redis/cursor';
import { keyInfo, scanPage } from '../redis/scan';

/** Keys a page aims for when the request names no `limit` (the contract documents it and the maximum). */
const DEFAULT_LIMIT = 100;

/**
 * The prefix to walk: a tenant (a credential with a prefix) walks only its own keys. A requested prefix inside
 * the tenant's is kept; one the tenant's prefix extends ('' or 'ten' for 'tenant-a:') narrows to it; any
 * other reaches outside: 403.
 */
export function scopedPrefix(res: Response, requested: string): string {
  const own = principalOf(res)?.prefix;
  if (own === undefined || requested.startsWith(own)) return requested;
  if (own.startsWith(requested)) return own;
  throw new ApiError(
    'forbidden',
    `Prefix '${requested}' is outside the key prefix '${own}' of this credential`,
  );
}

export function keyRoutes(routes: Routes, ctx: Context): void {
  routes.custom('get', '/store/keys', async ({ query }, _req, res) => {
    const prefix = scopedPrefix(res, (query.prefix as string | undefined) ?? '');
    const from = decodeCursor(query.cursor as string | undefined);
    const limit = (query.limit as number | undefined) ?? DEFAULT_LIMIT;
    const page = await scanPage(ctx.redis, ctx.keyspace, { prefix, type: query.type as string, limit, from });
    const cursor = page.next ? encodeCursor(page.next) : '';
    sendJson(res, 200, { keys: page.keys, cursor, complete: page.next === null });
  });
  routes.custom('get', '/store/keys/{key}', async ({ params }, _req, res) => {
    ctx.access.authorize(res, 'read', [params.key as string]);
    const info = await keyInfo(ctx.redis, ctx.keyspace, params.key as string);
    if (!info) throw notFound(params.key as string);
    sendJson(res, 200, info);
  });
  // The credential itself, for clients that show only what it may do (the console).
  routes.custom('get', '/store/whoami', (_input, _req, res) => {
    const { id, scheme, permissions, prefix } = principalOf(res) as Principal;
    sendJson(res, 200, { id, scheme, permissions, prefix: prefix ?? null });
  });
  // Any type: a plain DEL through the operation runner (durable writes, failover fence, metrics as elsewhere); with
  // the change feed on, key-delete-1.lua, which appends the event in the same step; under If-Match, a DEL inside
  // typed_etag (typed.lua), which checks the key's ETag first (and appends the event).
  const del = ctx.config.changes.enabled ? 'keyDelete' : 'del';
  routes.op('delete', '/store/keys/{key}', ({ params, headers }) => {
    const key = params.key as string;
    const match = ifMatchCondition(headers['if-match']);
    if (match === '') {
      return {
        writes: true,
        keys: [key],
        commands: [{ name: del, keys: [key], args: [] }],
        result: ([n]) => ok({ success: true, deleted: n === 1 }),
      };
    }
    return {
      writes: true,
      keys: [key],
      commands: [{ name: 'typedEtag', keys: [key], args: [`d0${match}`, '*'] }],
      result: ([reply]) => ok({ success: true, deleted: (reply as [number])[0] === 1 }),
    };
  });
}
