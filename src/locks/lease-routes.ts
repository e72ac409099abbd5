// /store/leases: grant, keep alive (once, or over a Server-Sent Events stream whose loss ends it after a grace
// period), read and revoke a lease; the locks attached to it end with it.
import type { Response } from 'express';
import { ApiError } from '../errors';
import { principalOf } from '../http/auth/access';
import type { Routes } from '../http/routes';
import { sendJson } from '../http/send';
import type { Leases } from './leases';

/** A lease's id as stored: under the credential's key prefix, so that a tenant reaches only its own leases. */
export const scoped = (res: Response, id: string) => (principalOf(res)?.prefix ?? '') + id;
const unscoped = (res: Response, state: { lease: string }) => ({
  ...state,
  lease: state.lease.slice((principalOf(res)?.prefix ?? '').length),
});

export function leaseRoutes(routes: Routes, leases: Leases): void {
  routes.custom('post', '/store/leases', async ({ body }, _req, res) => {
    const state = await leases.grant(principalOf(res)?.prefix ?? '', body.ttl_ms as number);
    sendJson(res, 201, unscoped(res, state));
  });
  routes.custom('post', '/store/leases/{lease}/keepalive', async ({ params }, _req, res) => {
    sendJson(res, 200, unscoped(res, await leases.keepAlive(scoped(res, params.lease as string))));
  });
  routes.custom('get', '/store/leases/{lease}', async ({ params }, _req, res) => {
    const id = scoped(res, params.lease as string);
    const ttl = await leases.remaining(id);
    const { locks } = await leases.attached(id);
    sendJson(res, 200, {
      lease: params.lease,
      ttl_ms: ttl,
      expires_at: new Date(Date.now() + ttl).toISOString(),
      locks,
    });
  });
  routes.custom('delete', '/store/leases/{lease}', async ({ params }, _req, res) => {
    sendJson(res, 200, await leases.revoke(scoped(res, params.lease as string)));
  });
  routes.custom('get', '/store/leases/{lease}/keepalive', async ({ params, query }, _req, res) => {
    const id = scoped(res, params.lease as string);
    const grace = query.grace_ms as number | undefined;
    const first = await leases.keepAlive(id);
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-store',
      'X-Accel-Buffering': 'no',
    });
    const send = (event: string, data: object) =>
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    send('keepalive', unscoped(res, first));
    let stopped = false;
    const stop = () => {
      stopped = true;
      clearInterval(timer);
    };
    const timer = setInterval(
      () => {
        leases.keepAlive(id).then(
          (state) => !stopped && send('keepalive', unscoped(res, state)),
          (err: unknown) => {
            // A failed round (Redis away) is tried again at the next one; a lease that is gone ends the stream.
            if (!(err instanceof ApiError && err.type === 'not_found') || stopped) return;
            stop();
            send('expired', { lease: params.lease, message: err.message });
            res.end();
          },
        );
      },
      Math.max(50, Math.floor(first.ttl_ms / 3)),
    );
    res.once('close', () => {
      if (stopped) return;
      stop();
      // The holder is gone: the lease (and its locks) end `grace_ms` from now, else when their TTL runs out.
      if (grace !== undefined) void leases.keepAlive(id, grace).catch(() => {});
    });
  });
}
