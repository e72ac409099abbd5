// GET /store/changes (long-poll JSON, or Server-Sent Events with Accept: text/event-stream) and its WebSocket.
import type { Request, Response } from 'express';
import { WebSocketServer } from 'ws';
import { ApiError } from '../errors';
import { principalOf } from '../http/auth/access';
import { clientIdentity } from '../http/client-address';
import type { Context } from '../http/context';
import type { RequestInput } from '../http/contract';
import type { Routes } from '../http/routes';
import { sendJson } from '../http/send';
import { UPGRADE, type UpgradeRequest } from '../http/upgrade';
import { scopedPrefix } from '../routes/keys';
import type { Position } from './cursor';
import type { Feed } from './feed';
import { serveSse } from './sse';
import type { Filter } from './subscriber';
import { serveWs } from './ws';

/** Events a long-poll page holds at most when the request names no `limit`. */
const DEFAULT_LIMIT = 100;

function feedOf(ctx: Context): Feed {
  if (!ctx.feed)
    throw new ApiError(
      'unknown_endpoint',
      'The change feed is off on this service (SVC_CHANGES_ENABLED=false)',
    );
  return ctx.feed;
}

/**
 * The resume point: the Last-Event-ID header, else `since`. The header wins: EventSource reconnects to the same URL
 * (with its original `since`) and sends the id of the last event it received. A stream id, or on a Redis Cluster
 * the opaque cursor the feed gave (see cursor.ts).
 */
function resumePoint(feed: Feed, { query, headers }: RequestInput): Position | undefined {
  const text = (headers['last-event-id'] as string | undefined) || (query.since as string | undefined);
  if (text === undefined || text === '') return undefined;
  const position = feed.cursor.parse(text);
  if (!position)
    throw new ApiError('invalid_request', `'${text.slice(0, 100)}' is not an event id of this feed`);
  return position;
}

function filterOf({ query }: RequestInput, req: Request, res: Response, owner: Owners): Filter {
  const prefix = scopedPrefix(res, (query.prefix as string | undefined) ?? '');
  return {
    prefix,
    type: query.type as string | undefined,
    owner: { client: owner(req, res), principal: principalOf(res) },
  };
}
type Owners = ReturnType<typeof clientIdentity>;

const wantsEvents = (req: Request) => /\btext\/event-stream\b/.test(req.headers.accept ?? '');

export function changeRoutes(routes: Routes, ctx: Context): void {
  const owner = clientIdentity(ctx.config.ipv6PrefixLength);
  routes.custom('get', '/store/changes', async (input, req, res) => {
    const feed = feedOf(ctx);
    const filter = filterOf(input, req, res, owner);
    const since = resumePoint(feed, input);
    if (wantsEvents(req)) return serveSse(feed, req, res, filter, since, ctx.config.changes.heartbeatMs);
    const waitMs = ((input.query.wait as number | undefined) ?? 0) * 1000;
    const limit = (input.query.limit as number | undefined) ?? DEFAULT_LIMIT;
    const gone = new Promise<void>((resolve) => res.once('close', () => resolve()));
    sendJson(res, 200, await feed.poll({ filter, since, waitMs, limit, gone }));
  });

  // Clients send nothing (filters and resume point are in the query): a message is read into at most 1 KiB.
  const server = new WebSocketServer({ noServer: true, maxPayload: 1024 });
  routes.custom('get', '/store/changes/ws', (input, req, res) => {
    const feed = feedOf(ctx);
    const upgrade = (req as UpgradeRequest)[UPGRADE];
    if (!upgrade || req.headers.upgrade?.toLowerCase() !== 'websocket')
      throw new ApiError('invalid_request', 'This endpoint takes a WebSocket handshake (Upgrade: websocket)');
    const filter = filterOf(input, req, res, owner);
    const since = resumePoint(feed, input);
    feed.hub.checkRoom(filter.owner?.client);
    server.handleUpgrade(req, upgrade.socket, upgrade.head, (ws) => {
      void serveWs(feed, ws, filter, since, ctx.config.changes.heartbeatMs);
    });
  });
}
