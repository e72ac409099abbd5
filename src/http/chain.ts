// Several middleware functions as one: each router layer costs Express a path match and several allocations.
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Calls `handler` as Express 5 would: a thrown error or a rejected promise goes to `next` (a promise rejected
 * without a reason as an Error, so that it cannot pass for a call of `next()`).
 */
function call(handler: RequestHandler, req: Request, res: Response, next: NextFunction): void {
  try {
    const result: unknown = handler(req, res, next);
    if (result instanceof Promise) result.catch((err: unknown) => next(err || new Error('Rejected promise')));
  } catch (err) {
    next(err);
  }
}

/**
 * One middleware that runs `handlers` in order, as consecutive layers would: the next runs when one calls
 * `next()`, an error (or 'route' / 'router') skips the rest and goes to the router.
 */
export function chain(...handlers: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let at = 0;
    const step = (err?: unknown): void => {
      const handler = handlers[at++];
      if (err || !handler) next(err);
      else call(handler, req, res, step);
    };
    step();
  };
}
