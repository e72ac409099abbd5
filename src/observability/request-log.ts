// One log line per request: method, route template, status, duration, request id. Never keys or values.
import type { RequestHandler } from 'express';
import type { Logger } from './logger';

export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      if (!logger.isInfoEnabled()) return;
      logger.info('request', {
        method: req.method,
        route: res.locals.route ?? 'unknown',
        status: res.statusCode,
        duration_ms: Number(process.hrtime.bigint() - start) / 1e6,
        request_id: res.locals.requestId,
      });
    });
    next();
  };
}
