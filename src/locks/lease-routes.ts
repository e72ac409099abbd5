// /store/leases: grant, keep alive (once, or over a Server-Sent Events stream whose loss ends it after a grace
// period; also over a WebSocket), read and revoke a lease; the locks attached to it end with it.
import type { Response } from 'express';
import { WebSocketServer } from 'ws';
import { ApiError } from '../errors';
import { principalOf } from '../http/auth/access';
import type { Routes } from '../http/routes';
import { sendJson } from '../http/send';
import { UPGRADE, type UpgradeRequest } from '../http/upgrade';
import type { LeaseState, Leases } from './leases';

/** A lease's id as stored: under the credential's key prefix, so that a tenant reaches only its own leases. */
export const scoped = (res: Response, id: string) => (principalOf(res)?.prefix ?? '') + id;
const unscoped = <T extends { lease: string }>(res: Response, state: T): T => ({
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
    const first = await leases.keepAlive(id);
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-store',
      'X-Accel-Buffering': 'no',
    });
    const send = (event: string, data: object) =>
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    const stream = { send, end: () => res.end(), onLost: (lost: () => void) => res.once('close', lost) };
    keepAliveWhileOpen(leases, id, first, query.grace_ms as number | undefined, stream, (s) =>
      unscoped(res, s),
    );
  });
  // Clients send nothing: a message is read into at most 1 KiB.
  const server = new WebSocketServer({ noServer: true, maxPayload: 1024 });
  routes.custom('get', '/store/leases/{lease}/keepalive/ws', async ({ params, query }, req, res) => {
    const upgrade = (req as UpgradeRequest)[UPGRADE];
    if (!upgrade || req.headers.upgrade?.toLowerCase() !== 'websocket')
      throw new ApiError('invalid_request', 'This endpoint takes a WebSocket handshake (Upgrade: websocket)');
    const id = scoped(res, params.lease as string);
    const first = await leases.keepAlive(id);
    server.handleUpgrade(req, upgrade.socket, upgrade.head, (ws) => {
      const send = (kind: string, data: object) => ws.send(JSON.stringify({ kind, ...data }));
      const stream = {
        send,
        end: () => ws.close(1000),
        onLost: (lost: () => void) => ws.once('close', lost),
      };
      ws.on('error', () => ws.terminate());
      keepAliveWhileOpen(leases, id, first, query.grace_ms as number | undefined, stream, (s) =>
        unscoped(res, s),
      );
    });
  });
}

/** Where a keep-alive stream's events go: an SSE response or a WebSocket. */
interface KeepAliveStream {
  send(event: 'keepalive' | 'expired', data: object): void;
  end(): void;
  /** Calls `lost` once when the client's connection closes. */
  onLost(lost: () => void): void;
}

/**
 * Keeps lease `id` (and its locks) alive every third of its TTL while `stream` is open, sending a `keepalive`
 * event each time (`expired`, then the end, when the lease is gone); when the client's connection is lost, the
 * lease ends `grace` ms later (without it, when its TTL runs out).
 */
function keepAliveWhileOpen(
  leases: Leases,
  id: string,
  first: LeaseState,
  grace: number | undefined,
  stream: KeepAliveStream,
  shown: (state: LeaseState) => LeaseState,
): void {
  stream.send('keepalive', shown(first));
  let stopped = false;
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  const timer = setInterval(
    () => {
      leases.keepAlive(id).then(
        (state) => !stopped && stream.send('keepalive', shown(state)),
        (err: unknown) => {
          // A failed round (Redis away) is tried again at the next one; a lease that is gone ends the stream.
          if (!(err instanceof ApiError && err.type === 'not_found') || stopped) return;
          stop();
          stream.send('expired', { lease: shown(first).lease, message: err.message });
          stream.end();
        },
      );
    },
    Math.max(50, Math.floor(first.ttl_ms / 3)),
  );
  stream.onLost(() => {
    if (stopped) return;
    stop();
    // The holder is gone: the lease (and its locks) end `grace` ms from now, else when their TTL runs out.
    if (grace !== undefined) void leases.keepAlive(id, grace).catch(() => {});
  });
}
