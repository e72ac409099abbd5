// Registers routes from the contract: each route validates its input, then runs its handler; plus 404 and 405.
import type { IRouter, Request, RequestHandler, Response } from 'express';
import { match } from 'path-to-regexp';
import { ApiError } from '../errors';
import { jsonBody } from './body-limits';
import { bytesBody } from './bytes-body';
import type { Method, Operation, RequestInput } from './contract';
import { refuseFormBody } from './form-bodies';
import type { Transport } from './transport';

/** The prefixes every route is served under: `/store` (canonical) and its alias `/api`. */
export const PREFIXES = ['/store', '/api'] as const;

export type Handler = (input: RequestInput, req: Request, res: Response) => Promise<void> | void;

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/** `handler`, with the request's route named first (res.locals.route: its log line and metrics). */
const named =
  (path: string, handler: RequestHandler): RequestHandler =>
  (req, res, next) => {
    res.locals.route = path;
    return handler(req, res, next);
  };

/**
 * Registers one group of families (data or admin) in an app, each route under every prefix and behind the guards
 * (rate limits, authentication). Registered straight in the app, a route costs the router one layer: no mounted
 * router (its own dispatch, a rewrite of req.url) and no separate layer per guard.
 */
export class Routes {
  /** The operations of this group; an app's 404/405 fallback knows only those of the groups it serves. */
  readonly served: Operation[] = [];
  private readonly jsonBody: RequestHandler;

  constructor(
    private readonly ctx: Transport,
    private readonly router: IRouter,
    private readonly guards: RequestHandler,
    /** Admits heavy routes a few at a time, before their body is read (http/admission.ts). */
    private readonly heavy?: RequestHandler,
  ) {
    this.jsonBody = jsonBody(ctx.config.limits.maxBodyBytes);
  }

  /**
   * A route with its own handler (batches, admin); input is validated before it runs. The caller's permission
   * is checked before the input is validated, so that a client without it learns nothing from 400s and costs no
   * validation; a batch, whose permission depends on its items, passes `authorize` (run instead, on the raw request).
   * A `heavy` route (a batch) waits for its turn (http/admission.ts) after the guards, before its body is read.
   */
  custom(
    method: Method,
    path: string,
    handler: Handler,
    { authorize, heavy = false }: { authorize?: (req: Request, res: Response) => void; heavy?: boolean } = {},
  ): void {
    const operation = this.ctx.contract.operation(method, path);
    this.served.push(operation);
    this.ctx.served.push(operation);
    const run: RequestHandler = (req, res) => {
      res.locals.route = path;
      if (authorize) authorize(req, res);
      else this.ctx.access.authorize(res, operation.permission, []);
      if (method !== 'get') refuseFormBody(req, `${method.toUpperCase()} ${path}`);
      if (operation.hasBody) requireJson(req);
      const input = operation.validate({
        params: req.params,
        headers: req.headers,
        query: req.query,
        body: req.body,
      });
      return handler(input, req, res);
    };
    // A JSON body is parsed, and a heavy route waits for its turn, with the route named first: a bad body or a
    // request refused while it waits is logged and counted under it.
    const body = operation.hasBody
      ? [named(path, this.jsonBody)]
      : operation.bytesBody
        ? [bytesBody(this.ctx.config.limits.maxValueBytes)]
        : [];
    const turn = heavy && this.heavy ? [named(path, this.heavy)] : [];
    this.router[method](underPrefixes(path), this.guards, ...turn, ...body, run);
  }
}

function requireJson(req: Request): void {
  if (req.body === undefined && hasBody(req)) {
    throw new ApiError(
      'unsupported_media_type',
      `Content-Type must be application/json, not '${req.headers['content-type'] ?? 'none'}'`,
    );
  }
}

/** '/store/string/{key}' -> ['/store/string/:key', '/api/string/:key']: the Express paths under every prefix. */
export function underPrefixes(path: string): string[] {
  const relative = path.replace(/^\/store/, '').replace(/\{(\w+)\}/g, ':$1');
  return PREFIXES.map((prefix) => prefix + relative);
}

/** Answers what no route took: 405 with Allow when the path exists with other methods, else 404. */
export function fallback(operations: readonly Operation[]): RequestHandler {
  const paths = [...new Set(operations.map((o) => o.path))].map((path) => ({
    matches: underPrefixes(path).map((p) => match(p)),
    methods: operations.filter((o) => o.path === path).map((o) => o.method.toUpperCase()),
  }));
  return (req, res) => {
    res.locals.route = 'unknown';
    // A reserved segment matches two templates (`/store/set/union` and `/store/set/{key}`): list each method once.
    const allowed = [
      ...new Set(paths.filter((p) => p.matches.some((m) => m(req.path))).flatMap((p) => p.methods)),
    ];
    if (allowed.length === 0) throw new ApiError('unknown_endpoint', `No endpoint ${req.method} ${req.path}`);
    throw methodNotAllowed(req, allowed);
  };
}

/** 405 with Allow for a path served with other `methods` (HEAD added wherever GET is). */
export function methodNotAllowed(req: Request, methods: readonly string[]): ApiError {
  const allowed = methods.includes('GET') ? [...methods, 'HEAD'] : methods;
  return new ApiError(
    'method_not_allowed',
    `${req.method} is not allowed on ${req.path}; allowed: ${allowed.join(', ')}`,
    { headers: { Allow: allowed.join(', ') } },
  );
}
