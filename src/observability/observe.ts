// The one hook per request: on 'finish' it feeds statistics, metrics and the clients list, and logs one line.
import type { RequestHandler } from 'express';
import type { Config } from '../config';
import { ApiError } from '../errors';
import { Clients } from './clients';
import { infoEnabled, type Logger, logRequest } from './logger';
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
  if (status < 500 && !infoEnabled(logger)) return;
  const fields: Record<string, unknown> = {
    method,
    route,
    status,
    duration_ms: Math.round(ms * 1000) / 1000,
    request_id: locals.requestId,
  };
  if (errorType !== undefined) fields.error = errorType;
  if (status < 500) {
    logRequest(logger, fields);
    return;
  }
  const failure = locals.failure;
  // A bug (an error no code turned into an ApiError) gets its stack; a 500 the code raised on purpose says why.
  if (errorType === 'server_error' && !(failure instanceof ApiError))
    logger.error('request', { ...fields, err: failure });
  else logger.warn('request', { ...fields, cause: failure instanceof Error ? failure.message : undefined });
}

/** One answered request, as statistics, metrics, the clients list and the log see it. */
export interface Answered {
  method: string;
  route: string;
  status: number;
  ms: number;
  errorType: string | undefined;
  ip: string;
  userAgent: string;
  locals: Record<string, unknown>;
}

/** Counts and logs one answer; also called for the answers the HTTP parser's errors get (http/client-errors.ts). */
export function recordAnswer(telemetry: Telemetry, logger: Logger, a: Answered): void {
  telemetry.stats.request(a.method, a.route, a.ms, a.errorType);
  telemetry.metrics.request(a.method, a.route, a.ms / 1000, a.errorType);
  const principal = a.locals.principal as { id?: string } | undefined;
  telemetry.clients.seen(a.ip, a.userAgent, principal?.id);
  log(logger, a.method, a.route, a.status, a.ms, a.errorType, a.locals);
}

export function observeRequests(telemetry: Telemetry, logger: Logger): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      const status = res.statusCode;
      recordAnswer(telemetry, logger, {
        method: req.method,
        route: res.locals.route ?? 'unknown',
        status,
        ms: Number(process.hrtime.bigint() - start) / 1e6,
        errorType: status >= 400 ? ((res.locals.errorType as string | undefined) ?? 'unknown') : undefined,
        ip: req.ip ?? '',
        userAgent: req.headers['user-agent'] ?? '',
        locals: res.locals,
      });
    });
    next();
  };
}
