// The one hook per request: on 'finish' it feeds statistics, metrics and the clients list, and logs one line.
import type { RequestHandler } from 'express';
import type { Config } from '../config';
import { ApiError } from '../errors';
import { Clients } from './clients';
import type { Logger } from './logger';
import { Metrics } from './metrics';
import { Stats } from './stats';

/** What this instance counts about itself; one per createApp, shared by its data and admin listeners. */
export interface Telemetry {
  readonly startedAt: number;
  readonly metrics: Metrics;
  readonly stats: Stats;
  readonly clients: Clients;
  /** Reports one Redis round trip (see ops/run.ts). */
  readonly redis: (seconds: number, commands: number) => void;
}

export function createTelemetry(config: Config): Telemetry {
  const metrics = new Metrics();
  const stats = new Stats();
  return {
    startedAt: Date.now(),
    metrics,
    stats,
    clients: new Clients(config.clientsMax),
    redis: (seconds, commands) => {
      metrics.redis(seconds, commands);
      stats.redis(seconds * 1000, commands);
    },
  };
}

/**
 * Logs method, route template, status, duration and request id: never the raw path (it holds keys),
 * a value or a credential. A 5xx is logged at warn (error for a bug) with its cause.
 */
function log(
  logger: Logger,
  method: string,
  route: string,
  status: number,
  ms: number,
  errorType: string | undefined,
  locals: Record<string, unknown>,
): void {
  if (status < 500 && !logger.isInfoEnabled()) return;
  const fields = {
    method,
    route,
    status,
    duration_ms: Number(ms.toFixed(3)),
    request_id: locals.requestId,
    ...(errorType === undefined ? {} : { error: errorType }),
  };
  if (status < 500) {
    logger.info('request', fields);
    return;
  }
  const failure = locals.failure;
  // A bug (an error no code turned into an ApiError) gets its stack; a 500 the code raised on purpose says why.
  if (errorType === 'server_error' && !(failure instanceof ApiError))
    logger.error('request', { ...fields, err: failure });
  else logger.warn('request', { ...fields, cause: failure instanceof Error ? failure.message : undefined });
}

export function observeRequests(telemetry: Telemetry, logger: Logger): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const route: string = res.locals.route ?? 'unknown';
      const status = res.statusCode;
      const errorType =
        status >= 400 ? ((res.locals.errorType as string | undefined) ?? 'unknown') : undefined;
      telemetry.stats.request(req.method, route, ms, errorType);
      telemetry.metrics.request(req.method, route, ms / 1000, errorType);
      telemetry.clients.seen(req.ip ?? '', req.headers['user-agent'] ?? '', res.locals.principal?.id);
      log(logger, req.method, route, status, ms, errorType, res.locals);
    });
    next();
  };
}
