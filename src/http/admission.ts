// Heavy requests (batches, Upstash pipelines and transactions) run a few at a time per process; the rest wait unread.
import type { RequestHandler, Response } from 'express';
import { ApiError, REDIS_RETRY_AFTER } from '../errors';

/**
 * How many heavy requests one process works on at once. A batch of 100 operations holds ~100 KB of objects from its
 * parsed body until Redis answers; under 50 connections ~40 of them were alive at every young-generation GC, which
 * copied and then promoted them (a quarter of a batch's CPU). Waiting before its body is read, a request holds
 * nothing but its socket. Redis runs one call at a time, so a few in flight keep it as busy as fifty.
 */
export const HEAVY_AT_ONCE = 8;

/**
 * A middleware admitting at most `limit` requests at a time, in arrival order; a request's turn ends when its
 * response closes (answered or abandoned). One that waits longer than `maxWaitMs()` (the Redis deadline: it could
 * not be answered in time anyway) is a 503, and one whose client leaves while it waits is dropped from the line.
 */
export function admission(limit: number, maxWaitMs: () => number): RequestHandler {
  let running = 0;
  const waiting = new Set<() => void>();
  const release = () => {
    running--;
    const [next] = waiting;
    if (next) next();
  };
  const admit = (res: Response) => {
    running++;
    res.once('close', release);
  };
  return (_req, res, next) => {
    if (running < limit) {
      admit(res);
      next();
      return;
    }
    const turn = () => {
      clearTimeout(timer);
      waiting.delete(turn);
      res.off('close', leave);
      admit(res);
      next();
    };
    const leave = () => {
      clearTimeout(timer);
      waiting.delete(turn);
    };
    const timer = setTimeout(() => {
      leave();
      res.off('close', leave);
      next(
        new ApiError(
          'service_unavailable',
          'Too many batches and pipelines are waiting for Redis; retry shortly',
          {
            retryAfter: REDIS_RETRY_AFTER,
          },
        ),
      );
    }, maxWaitMs());
    waiting.add(turn);
    res.once('close', leave);
  };
}
