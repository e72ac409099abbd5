// /store/locks/{name}: acquire (may wait), renew, release with the owner token, status without it.
import type { Response } from 'express';
import type { Context } from '../context';
import { ApiError } from '../errors';
import { clientIdentity } from '../http/client-address';
import type { RequestInput } from '../http/contract';
import type { Routes } from '../http/routes';
import { sendJson } from '../http/send';

/** Aborted when the client goes away before its answer was sent: a waiting acquire stops waiting. */
function abandoned(res: Response): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

export function lockRoutes(routes: Routes, ctx: Context): void {
  const clientOf = clientIdentity(ctx.config.ipv6PrefixLength);
  const named = (res: Response, { params }: RequestInput, permission: 'read' | 'write') => {
    const name = params.name as string;
    ctx.access.authorize(res, permission, [name]);
    return name;
  };
  routes.custom('post', '/store/locks/{name}/acquire', async (input, req, res) => {
    const name = named(res, input, 'write');
    const { ttl_ms, wait_ms = 0 } = input.body as { ttl_ms: number; wait_ms?: number };
    const signal = abandoned(res);
    const grant = await ctx.locks.acquire(name, ttl_ms, wait_ms, signal, clientOf(req, res));
    if (signal.aborted) throw new ApiError('service_unavailable', 'The client went away');
    sendJson(res, 200, { acquired: true, ...grant });
  });
  routes.custom('post', '/store/locks/{name}/renew', async (input, _req, res) => {
    const name = named(res, input, 'write');
    const { token, ttl_ms } = input.body as { token: string; ttl_ms: number };
    sendJson(res, 200, { renewed: true, ...(await ctx.locks.renew(name, token, ttl_ms)) });
  });
  routes.custom('post', '/store/locks/{name}/release', async (input, _req, res) => {
    const name = named(res, input, 'write');
    await ctx.locks.release(name, (input.body as { token: string }).token);
    sendJson(res, 200, { released: true, name });
  });
  routes.custom('get', '/store/locks/{name}', async (input, _req, res) => {
    sendJson(res, 200, await ctx.locks.status(named(res, input, 'read')));
  });
}
