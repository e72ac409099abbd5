// The one place that writes error bodies: {error, message, status, timestamp, request_id, retry_after?, details?}.
import type { ErrorRequestHandler, Request, Response } from 'express';
import { type ApiError, toApiError } from '../errors';
import type { Logger } from '../observability/logger';
import { sendJson } from './send';

export function sendError(res: Response, err: ApiError, withDetails: boolean): void {
  res.locals.errorType = err.type;
  // A body not read to its end (refused before or while reading it) would otherwise be read and discarded by
  // Node to keep the connection: closing it bounds what a refused upload costs. A request without a body keeps
  // its connection (Node marks it complete only after the handler, so `complete` alone would close every one).
  const { req } = res;
  const bodyComing =
    Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (bodyComing && !req.complete) res.setHeader('Connection', 'close');
  if (err.headers) for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
  if (err.retryAfter !== undefined) res.setHeader('Retry-After', String(err.retryAfter));
  sendJson(res, err.status, errorBody(err, res.locals.requestId, withDetails));
}

/** The JSON body of every error answer, here and for the parser's errors (client-errors.ts). */
export function errorBody(err: ApiError, requestId: unknown, withDetails: boolean): Record<string, unknown> {
  return {
    error: err.type,
    message: err.message,
    status: err.status,
    timestamp: new Date().toISOString(),
    request_id: requestId,
    ...(err.retryAfter === undefined ? {} : { retry_after: err.retryAfter }),
    ...(withDetails && err.details ? { details: err.details } : {}),
  };
}

/**
 * The request's log line (observability/observe.ts) reports a 5xx with its cause: `res.locals.failure`
 * is the error itself for a bug (logged with its stack), the underlying Redis error otherwise.
 */
export function errorHandler(logger: Logger, errorDetails: () => boolean): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, _next) => {
    const apiError = toApiError(err);
    if (apiError.status >= 500) res.locals.failure = apiError.type === 'server_error' ? err : apiError.cause;
    if (res.headersSent) {
      // No 'finish' will come for this response, so the request log line is written here.
      logger.error('request failed after its headers were sent', {
        request_id: res.locals.requestId,
        route: res.locals.route,
        method: req.method,
        err,
      });
      res.destroy();
      return;
    }
    sendError(res, apiError, errorDetails());
  };
}
