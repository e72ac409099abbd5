// Browsers: the Origin allowlist (CORS, preflights from the contract), Sec-Fetch-Site, form bodies, and, in protected
// mode, loopback Host names only.
import type { Request, RequestHandler, Response } from 'express';
import { match } from 'path-to-regexp';
import { ApiError } from '../errors';
import type { Operation } from './contract';
import { underPrefixes } from './routes';
import type { Transport } from './transport';

/** How long a browser may cache a preflight's answer (seconds). */
const PREFLIGHT_MAX_AGE = 600;

/** Request headers every operation may carry besides those its contract names. */
const ALWAYS_ALLOWED = ['Authorization', 'Content-Type'];

const loopbackNames = /^(localhost|[a-z0-9.-]*\.localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])$/;

/** The Host header without its port, lower case: 'LOCALHOST:8080' -> 'localhost', '[::1]:80' -> '[::1]'. */
function hostName(host: string): string {
  const end = host.startsWith('[') ? host.indexOf(']') + 1 : host.lastIndexOf(':');
  return (end > 0 ? host.slice(0, end) : host).toLowerCase();
}

/** True when `host` (a Host header) names this machine: localhost, *.localhost, 127.0.0.0/8 or [::1]. */
export function isLoopbackHost(host: string): boolean {
  return loopbackNames.test(hostName(host));
}

/** The origin the request was sent to (`http://host:port`, as the browser would write it for this page). */
const ownOrigin = (req: Request) => `${req.protocol}://${req.host}`.toLowerCase();

interface Preflight {
  readonly methods: string;
  readonly headers: string;
}

/** Per path of the contract: the methods it serves and the request headers they take, for preflight answers. */
function preflights(
  operations: readonly Operation[],
  requestIdHeader: string,
): (path: string) => Preflight | undefined {
  const byPath = new Map<string, Operation[]>();
  for (const op of operations) byPath.set(op.path, [...(byPath.get(op.path) ?? []), op]);
  const entries = [...byPath.values()].map((ops) => {
    const methods = new Set(ops.map((o) => o.method.toUpperCase()));
    if (methods.has('GET')) methods.add('HEAD');
    const headers = new Set([...ALWAYS_ALLOWED, requestIdHeader, ...ops.flatMap((o) => o.headers)]);
    const matchers = underPrefixes(ops[0]?.path ?? '').map((p) => match(p));
    return { matchers, methods, headers };
  });
  return (path) => {
    const found = entries.filter((e) => e.matchers.some((m) => m(path)));
    if (found.length === 0) return undefined;
    // A reserved segment matches two templates (`/store/set/union` and `/store/set/{key}`): both answer.
    return {
      methods: [...new Set(found.flatMap((e) => [...e.methods]))].join(', '),
      headers: [...new Set(found.flatMap((e) => [...e.headers]))].join(', '),
    };
  };
}

/**
 * A link followed from another site (a top-level GET the user sees, e.g. to /console or /docs): it reads nothing a
 * page can see and changes nothing, except on /upstash, whose path form writes with a GET.
 */
function isReadingNavigation(req: Request): boolean {
  return (
    req.headers['sec-fetch-mode'] === 'navigate' &&
    (req.method === 'GET' || req.method === 'HEAD') &&
    !req.path.startsWith('/upstash')
  );
}

function refuse(message: string): never {
  throw new ApiError('forbidden', message);
}

/**
 * The browser checks of every request, before any route: (1) in protected mode a Host that is not a loopback name
 * is refused (a page reached through DNS rebinding names its own host); (2) an `Origin` that is neither this
 * service's own origin nor in SVC_CORS_ORIGINS is refused, so a web page cannot drive the API (form posts, no-cors
 * fetches, the change feed's WebSocket); an allowed one gets the CORS headers, and its preflight (OPTIONS with
 * Access-Control-Request-Method) is answered from the contract; (3) without an `Origin`, a request a browser marks
 * `Sec-Fetch-Site: cross-site` or `same-site` (an `<img>`, a no-cors GET from another page) is refused: its origin
 * cannot be checked; a followed link (a navigating GET) passes, except to /upstash, whose path form writes. A request from curl or a server (neither header) costs two header lookups here
 * outside protected mode.
 */
export function browserChecks(ctx: Transport): RequestHandler {
  let exposed = '';
  let preflight: ((path: string) => Preflight | undefined) | undefined;
  let goodHost = '';
  return (req, res, next) => {
    const { config } = ctx;
    if (config.auth.protectedMode && !ctx.authConfigured()) {
      const host = req.headers.host ?? '';
      if (host !== goodHost && host !== '') {
        if (!isLoopbackHost(host))
          refuse(
            `Protected mode: Host '${host.slice(0, 100)}' is not a loopback name or address (localhost, 127.0.0.1, [::1]); ` +
              'this refuses web pages that reach the service through DNS rebinding. Configure credentials to serve other names',
          );
        goodHost = host;
      }
    }
    const origin = req.headers.origin;
    if (origin === undefined) {
      const site = req.headers['sec-fetch-site'];
      if ((site === 'cross-site' || site === 'same-site') && !isReadingNavigation(req))
        refuse(
          `A browser request from another site (Sec-Fetch-Site: ${site}) without an Origin is not allowed: ` +
            'its origin cannot be checked against SVC_CORS_ORIGINS',
        );
      return next();
    }
    const allowed = config.corsOrigins;
    const any = allowed[0] === '*';
    const lower = origin.toLowerCase();
    if (!any && !allowed.includes(lower)) {
      if (lower === ownOrigin(req)) return next();
      refuse(
        `Origin '${origin.slice(0, 200)}' is not allowed: add it to SVC_CORS_ORIGINS to let web pages from it call this service`,
      );
    }
    res.setHeader('Vary', 'Origin');
    res.setHeader('Access-Control-Allow-Origin', any ? '*' : origin);
    // Credentials (cookies, a browser's Basic login) are never allowed together with `*`.
    if (!any) res.setHeader('Access-Control-Allow-Credentials', 'true');
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
      preflight ??= preflights(ctx.contract.operations, config.requestIdHeader);
      const found = preflight(req.path);
      if (found) return answerPreflight(res, found);
    }
    exposed ||= exposedHeaders(config.requestIdHeader);
    res.setHeader('Access-Control-Expose-Headers', exposed);
    next();
  };
}

function exposedHeaders(requestIdHeader: string): string {
  return [
    'ETag',
    'RateLimit-Limit',
    'RateLimit-Remaining',
    'RateLimit-Reset',
    'RateLimit-Policy',
    'RateLimit',
    'Retry-After',
    'WWW-Authenticate',
    'Allow',
    requestIdHeader,
  ].join(', ');
}

function answerPreflight(res: Response, { methods, headers }: Preflight): void {
  res.locals.route = 'preflight';
  res.setHeader('Access-Control-Allow-Methods', methods);
  res.setHeader('Access-Control-Allow-Headers', headers);
  res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE));
  res.status(204).end();
}
