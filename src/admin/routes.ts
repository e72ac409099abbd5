// Admin routes: /store/admin/... ping, health, info, clients, key memory, stats, flush, reload, metrics.
import type { Request, Response } from 'express';
import type { Context } from '../context';
import { ApiError, notFound, REDIS_RETRY_AFTER } from '../errors';
import type { Method, RequestInput } from '../http/contract';
import type { Routes } from '../http/routes';
import { sendJson } from '../http/send';
import { redisMode } from '../redis/client';
import { scriptMode } from '../redis/functions';
import { instanceClients, instanceMetrics, instanceStats, reloadEveryWorker } from './aggregate';
import { buildInfo, publicConfig, serverRecord } from './info';
import { flush, keyRecord, probe } from './redis';

type Handler = (input: RequestInput, res: Response, req: Request) => Promise<void> | void;

const now = () => new Date().toISOString();

export function adminRoutes(routes: Routes, ctx: Context): void {
  const { version, buildDate } = buildInfo();
  const admin = (method: Method, path: string, handler: Handler) =>
    routes.custom(method, path, (input, req, res) => {
      ctx.access.authorize(res, 'admin', input.params.key === undefined ? [] : [input.params.key]);
      return handler(input, res, req);
    });

  admin('get', '/store/admin/ping', (_input, res) => sendJson(res, 200, { pong: 'pong', timestamp: now() }));

  admin('get', '/store/admin/health', async (_input, res) => {
    const { latency, memory, memoryUnavailable } = await probe(ctx.redis);
    const healthy = latency !== null;
    // A 503 is counted as an error in statistics and metrics like any other.
    if (!healthy) {
      res.locals.errorType = 'service_unavailable';
      res.setHeader('Retry-After', String(REDIS_RETRY_AFTER));
    }
    sendJson(res, healthy ? 200 : 503, {
      status: healthy ? 'healthy' : 'unhealthy',
      timestamp: now(),
      uptime: Math.floor((Date.now() - ctx.telemetry.startedAt) / 1000),
      database: { status: healthy ? 'connected' : 'disconnected', type: redisMode(ctx.config), latency },
      memory,
      ...(memoryUnavailable && { memory_unavailable: memoryUnavailable }),
      server: serverRecord(ctx.capabilities.current, scriptMode(ctx.redis)),
    });
  });

  admin('get', '/store/admin/info', (_input, res) =>
    sendJson(res, 200, {
      version,
      build_date: buildDate,
      config: publicConfig(ctx.config),
      features: {
        websocket: ctx.feed !== undefined,
        authentication: ctx.authConfigured(),
        cors: ctx.config.corsOrigins.length > 0,
      },
      server: serverRecord(ctx.capabilities.current, scriptMode(ctx.redis)),
    }),
  );

  // Clients, stats and metrics cover every worker of this instance (aggregate.ts).
  admin('get', '/store/admin/clients', async (_input, res) => {
    const clients = await instanceClients(ctx);
    sendJson(res, 200, { clients, total_clients: clients.length });
  });

  admin('get', '/store/admin/memory/{key}', async (input, res) => {
    const key = input.params.key as string;
    const record = await keyRecord(ctx.redis, ctx.keyspace.user(key));
    if (!record) throw notFound(key);
    const { type, size, ttl, idleSeconds } = record;
    const lastAccessed =
      idleSeconds === null ? null : new Date(Date.now() - idleSeconds * 1000).toISOString();
    sendJson(res, 200, { key, type, size, ttl, created_at: null, last_accessed: lastAccessed });
  });

  admin('get', '/store/admin/stats', async (_input, res) => sendJson(res, 200, await instanceStats(ctx)));

  admin('post', '/store/admin/flush', async (_input, res) => {
    const { enabled, maxlen } = ctx.config.changes;
    const feed = enabled ? { key: ctx.keyspace.changes, maxlen, streams: ctx.store.streams } : undefined;
    const removed = await flush(ctx.redis, ctx.keyspace, feed);
    const prefix = ctx.keyspace.prefix;
    const message = prefix ? `Removed the keys under prefix '${prefix}'` : 'Database flushed';
    sendJson(res, 200, { success: true, message, keys_removed: removed });
  });

  admin('post', '/store/admin/reload', async (_input, res) => {
    const message = await reloadEveryWorker(ctx);
    sendJson(res, 200, { success: true, message, timestamp: now() });
  });

  // Checked per request, so that a reload can switch metrics on or off.
  admin('get', '/store/admin/metrics', async (_input, res, req) => {
    if (!ctx.config.metricsEnabled) {
      throw new ApiError(
        'unknown_endpoint',
        `No endpoint ${req.method} ${req.baseUrl}${req.path} (metrics are disabled)`,
      );
    }
    const text = await instanceMetrics(ctx);
    res.setHeader('Content-Type', ctx.telemetry.metrics.contentType);
    res.end(text);
  });
}
