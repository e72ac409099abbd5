// Every status the apps of a test file answered, per operation: the contract must document each (issue 28).
import type { Express, Response } from 'express';
import { isDocumented } from './schemas';

/** `METHOD template status` -> how many times; HEAD is counted as the GET it mirrors. */
const seen = new Map<string, number>();

/** Counts each answer of `app` under its operation (the route template the app names it by). */
export function recordStatuses(app: Express): void {
  const handle = (app as unknown as { handle: (...args: unknown[]) => unknown }).handle;
  (app as unknown as { handle: (...args: unknown[]) => unknown }).handle = function (req, res, next) {
    const response = res as Response;
    response.once('finish', () => {
      const route = response.locals.route as string | undefined;
      // Unknown paths and methods (404 / 405) belong to no operation; nor do the pages outside /store but `/`.
      if (!route || route === 'unknown' || (!route.startsWith('/store/') && route !== '/')) return;
      const method =
        (req as { method: string }).method === 'HEAD' ? 'get' : (req as { method: string }).method;
      const id = `${method.toLowerCase()} ${route} ${response.statusCode}`;
      seen.set(id, (seen.get(id) ?? 0) + 1);
    });
    return handle.call(this, req, res, next);
  };
}

/** The answers seen whose status the contract does not document for their operation. */
export function undocumentedStatuses(): string[] {
  return [...seen.keys()].filter((id) => {
    const [method, route, status] = id.split(' ') as [string, string, string];
    return !isDocumented(method, route, Number(status));
  });
}
