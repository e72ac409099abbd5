// /store/locks/{name} and /store/semaphores/{name}: acquire (may wait), renew, release with the owner token,
// status without it.
import type { Response } from 'express';
import type { Context } from '../context';
import { ApiError } from '../errors';
import { clientIdentity } from '../http/client-address';
import type { RequestInput } from '../http/contract';
import type { Routes } from '../http/routes';
import { sendJson } from '../http/send';
import { scopedPrefix } from '../routes/keys';
import { leaseRoutes, scoped } from './lease-routes';
import { Leases } from './leases';
import { heldLocks } from './list';
import type { KindName } from './locks';

/** Aborted when the client goes away before its answer was sent: a waiting acquire stops waiting. */
function abandoned(res: Response): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

interface Body {
  token: string;
  ttl_ms?: number;
  lease?: string;
  wait_ms?: number;
  limit?: number;
}

export function lockRoutes(routes: Routes, ctx: Context): void {
  const clientOf = clientIdentity(ctx.config.ipv6PrefixLength);
  const named = (res: Response, { params }: RequestInput, permission: 'read' | 'write') => {
    const name = params.name as string;
    ctx.access.authorize(res, permission, [name]);
    return name;
  };
  const kinds: [KindName, string][] = [
    ['lock', '/store/locks/{name}'],
    ['semaphore', '/store/semaphores/{name}'],
  ];
  const leases = new Leases(() => ctx.store, ctx.locks);
  leaseRoutes(routes, leases);
  /** The TTL an acquire asks for: its own, or (a lock under a lease) what the lease has left. */
  const ttlOf = async (res: Response, { ttl_ms, lease }: Body) => {
    if (lease === undefined) {
      if (ttl_ms === undefined)
        throw new ApiError('invalid_ttl', 'ttl_ms is required (or lease, for a lock)');
      return ttl_ms;
    }
    return leases.remaining(scoped(res, lease));
  };
  for (const [kind, base] of kinds) {
    routes.custom('post', `${base}/acquire`, async (input, req, res) => {
      const name = named(res, input, 'write');
      const body = input.body as unknown as Body;
      const ttlMs = await ttlOf(res, body);
      const signal = abandoned(res);
      const options = { ttlMs, waitMs: body.wait_ms ?? 0, limit: body.limit };
      const grant = await ctx.locks.acquire(kind, name, options, signal, clientOf(req, res));
      if (signal.aborted) throw new ApiError('service_unavailable', 'The client went away');
      if (body.lease !== undefined) await leases.attach(scoped(res, body.lease), name, grant.token, ttlMs);
      sendJson(res, 200, {
        acquired: true,
        ...grant,
        ...(body.lease === undefined ? {} : { lease: body.lease }),
      });
    });
    routes.custom('post', `${base}/renew`, async (input, _req, res) => {
      const name = named(res, input, 'write');
      const { token, ttl_ms } = input.body as unknown as Body;
      sendJson(res, 200, { renewed: true, ...(await ctx.locks.renew(kind, name, token, ttl_ms as number)) });
    });
    routes.custom('post', `${base}/release`, async (input, _req, res) => {
      const name = named(res, input, 'write');
      await ctx.locks.release(kind, name, (input.body as unknown as Body).token);
      sendJson(res, 200, { released: true, name });
    });
  }
  routes.custom('get', '/store/locks', async ({ query }, _req, res) => {
    const prefix = scopedPrefix(res, (query.prefix as string | undefined) ?? '');
    const limit = (query.limit as number | undefined) ?? 100;
    sendJson(res, 200, await heldLocks(ctx.redis, ctx.keyspace, prefix, limit));
  });
  routes.custom('get', '/store/locks/{name}', async (input, _req, res) => {
    sendJson(res, 200, await ctx.locks.status(named(res, input, 'read')));
  });
  routes.custom('get', '/store/semaphores/{name}', async (input, _req, res) => {
    sendJson(res, 200, await ctx.locks.semaphoreStatus(named(res, input, 'read')));
  });
}
