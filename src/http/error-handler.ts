// The one place that writes error bodies: {error, message, status, timestamp, request_id, retry_after?, details?}.
import type { ErrorRequestHandler, Request, Response } from 'express';
import { type ApiError, toApiError } from '../errors';
import type { Logger } from '../observability/logger';
import { sendJson } from './send';

export function sendError(res: Response, err: ApiError, withDetails: boolean): void {
  res.locals.errorType = err.type;
  if (err.headers) for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
  if (err.retryAfter !== undefined) res.setHeader('Retry-After', String(err.retryAfter));
  sendJson(res, err.status, {
    error: err.type,
    message: err.message,
    status: err.status,
    timestamp: new Date().toISOString(),
    request_id: res.locals.requestId,
    ...(err.retryAfter === undefined ? {} : { retry_after: err.retryAfter }),
    ...(withDetails && err.details ? { details: err.details } : {}),
  });
}

export function errorHandler(logger: Logger, errorDetails: () => boolean): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, _next) => {
    const apiError = toApiError(err);
    if (apiError.type === 'server_error') {
      logger.error('request failed', {
        request_id: res.locals.requestId,
        route: res.locals.route,
        method: req.method,
        err,
      });
    } else if (apiError.status >= 500) {
      const cause = apiError.cause instanceof Error ? apiError.cause.message : undefined;
      logger.warn('data store unavailable', {
        request_id: res.locals.requestId,
        route: res.locals.route,
        cause,
      });
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendError(res, apiError, errorDetails());
  };
}
