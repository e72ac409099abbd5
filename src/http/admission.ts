// Heavy requests (batches, Upstash pipelines and transactions) run a few at a time per process; the rest wait unread.
import type { Request, RequestHandler, Response } from 'express';
import { ApiError, REDIS_RETRY_AFTER } from '../errors';

/**
 * How many heavy requests one process works on at once. A batch of 100 operations holds ~100 KB of objects from its
 * parsed body until Redis answers; under 50 connections ~40 of them were alive at every young-generation GC, which
 * copied and then promoted them (a quarter of a batch's CPU). Waiting before its body is read, a request holds
 * nothing but its socket. Redis runs one call at a time, so a few in flight keep it as busy as fifty.
 */
export const HEAVY_AT_ONCE = 8;

/**
 * A middleware admitting at most `limit` requests at a time. Waiting requests take turns by client (`clientOf`: a
 * credential or an address), each client's in arrival order, so that one client's flood does not hold back the
 * others. A request's turn ends when its response closes (answered or abandoned). One that waits longer than
 * `maxWaitMs()` (the Redis deadline: it could not be answered in time anyway) is a 503, and one whose client leaves
 * while it waits is dropped from the line.
 */
export function admission(
  limit: number,
  maxWaitMs: () => number,
  clientOf: (req: Request, res: Response) => string,
): RequestHandler {
  let running = 0;
  // Each client's waiting requests; the clients in the order of their next turn (a Map keeps insertion order).
  const lines = new Map<string, Set<() => void>>();
  const dequeue = (client: string, turn: () => void) => {
    const line = lines.get(client);
    line?.delete(turn);
    if (line?.size === 0) lines.delete(client);
  };
  const release = () => {
    running--;
    const first = lines.entries().next();
    if (first.done) return;
    const [client, line] = first.value;
    const [turn] = line;
    // The client goes to the back of the rotation with what it has left.
    lines.delete(client);
    if (line.size > 1) lines.set(client, line);
    turn?.();
  };
  const admit = (res: Response) => {
    running++;
    res.once('close', release);
  };
  return (req, res, next) => {
    if (running < limit) {
      admit(res);
      next();
      return;
    }
    const client = clientOf(req, res);
    const turn = () => {
      clearTimeout(timer);
      dequeue(client, turn);
      res.off('close', leave);
      admit(res);
      next();
    };
    const leave = () => {
      clearTimeout(timer);
      dequeue(client, turn);
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
    const line = lines.get(client);
    if (line) line.add(turn);
    else lines.set(client, new Set([turn]));
    res.once('close', leave);
  };
}
