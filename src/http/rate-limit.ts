// Per-client-IP rate limits with counters in Redis (shared by every instance): one for data, one for admin.
import { isIPv6 } from 'node:net';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import type { Config } from '../config';
import { ApiError } from '../errors';
import type { Context } from './context';
import { type Count, RateCounters } from './rate-counters';
import { PREFIXES } from './routes';

type Settings = Config['rateLimit'];
interface Budget {
  readonly limit: number;
  readonly windowSeconds: number;
}
type Family = 'data' | 'admin';

const BUDGETS: Record<Family, (s: Settings) => Budget> = {
  data: (s) => ({ limit: s.requests, windowSeconds: s.windowSeconds }),
  admin: (s) => ({ limit: s.adminRequests, windowSeconds: s.adminWindowSeconds }),
};

const ADMIN_PATH = new RegExp(`^(${PREFIXES.join('|')})/admin(/|$)`);
/** Works wherever the middleware is mounted (at the root or under a prefix). */
const isAdmin = (req: Request) => ADMIN_PATH.test(req.baseUrl + req.path);

/**
 * How long the limiter then leaves Redis alone after a counter took longer than its connection's command timeout
 * (LIMITER_COMMAND_TIMEOUT_MS, redis/client.ts): without it a hung Redis would hold each request that waits for its
 * count for a whole timeout before the data call even starts.
 */
const STORE_BACKOFF_MS = 1000;

/**
 * Fails fast for STORE_BACKOFF_MS after Redis did not answer the limiter (a Redis error reply does not count): a
 * hung Redis then holds a request back for one command timeout at most, not one per counter call.
 */
function backoff() {
  let skipUntil = 0;
  return <T>(call: () => Promise<T>): Promise<T> => {
    if (Date.now() < skipUntil)
      return Promise.reject(new Error('Redis did not answer the rate limiter recently'));
    // A call that throws at once (ioredis does for a Cluster slot no node serves) becomes a rejection too.
    return new Promise<T>((resolve) => resolve(call())).catch((err: Error) => {
      if (err.name !== 'ReplyError') skipUntil = Date.now() + STORE_BACKOFF_MS;
      throw err;
    });
  };
}

/** What express-rate-limit's default key generator warns about once: a proxy setting that defeats the limit. */
function proxyWarning(req: Request, trustProxy: Config['trustProxy']): string | undefined {
  if (trustProxy === true)
    return 'SVC_TRUST_PROXY=true believes any X-Forwarded-For, so a client can pick its own rate-limit key: set it to the proxy address or hop count';
  if (!trustProxy && (req.headers['x-forwarded-for'] !== undefined || req.headers.forwarded !== undefined))
    return 'requests carry X-Forwarded-For or Forwarded but SVC_TRUST_PROXY is false: every client behind that proxy shares one rate-limit budget';
  return undefined;
}

/**
 * The client's key: its address, or its /56 network for IPv6 (express-rate-limit's own rule). Synchronous, unlike
 * the default, and parsing an IPv6 address (about 5 µs) happens once per address. Like the default, it warns
 * once about a proxy setting that defeats the limit.
 */
function clientKey(ctx: Context): (req: Request) => string {
  const networks = new Map<string, string>();
  let warned = false;
  return (req) => {
    if (!warned) {
      const warning = proxyWarning(req, ctx.config.trustProxy);
      if (warning) ctx.logger.warn('rate limiter', { cause: warning });
      warned = warning !== undefined;
    }
    const ip = req.ip ?? '';
    if (!isIPv6(ip)) return ip;
    let key = networks.get(ip);
    if (key === undefined) {
      if (networks.size >= IPV6_CACHE_MAX) networks.clear();
      key = ipKeyGenerator(ip);
      networks.set(ip, key);
    }
    return key;
  };
}
const IPV6_CACHE_MAX = 10_000;

function tooMany(family: Family, limit: number, windowSeconds: number, retryAfter: number): ApiError {
  const what = family === 'admin' ? 'admin requests' : 'requests';
  return new ApiError(
    'rate_limit_exceeded',
    `Too many ${what}: limit of ${limit} per ${windowSeconds} seconds reached; retry in ${retryAfter} s`,
    { retryAfter },
  );
}

/**
 * One limiter for a window length; the limit itself is read from ctx.config per request. What clients see is
 * express-rate-limit's (draft-6 headers: RateLimit-Policy, -Limit, -Remaining, -Reset; past the limit a 429 with
 * Retry-After) and rate-limit-redis's counters (rate-limit-increment-1.lua adds a count to its script); the
 * counting is RateCounters', which lets a request far from its limit go on without waiting for Redis.
 */
function build(ctx: Context, family: Family, windowSeconds: number): RequestHandler {
  const guard = backoff();
  const counters = new RateCounters(
    (key, by, windowMs) => guard(() => ctx.limiterRedis.rateLimitIncrement(key, by, windowMs)),
    windowSeconds * 1000,
  );
  const prefix = ctx.keyspace.internal('rl', family, '');
  const keyOf = clientKey(ctx);
  let policy = { limit: 0, header: '' };
  const decide = (res: Response, next: NextFunction, limit: number, { hits, resetAt }: Count) => {
    const seconds = Math.max(0, Math.ceil((resetAt - Date.now()) / 1000));
    if (!res.headersSent) {
      if (policy.limit !== limit) policy = { limit, header: `${limit};w=${windowSeconds}` };
      res.setHeader('RateLimit-Policy', policy.header);
      res.setHeader('RateLimit-Limit', String(limit));
      res.setHeader('RateLimit-Remaining', String(Math.max(limit - hits, 0)));
      res.setHeader('RateLimit-Reset', String(seconds));
    }
    if (hits <= limit) next();
    else next(tooMany(family, limit, windowSeconds, Math.max(1, seconds)));
  };
  // Redis did not count the request (down, hung, or the limiter backing off): it goes on uncounted.
  const storeFailed = (next: NextFunction, err: Error) => {
    ctx.logger.debug('rate limiter store failed; request let through', { cause: err.message });
    next();
  };
  return (req, res, next) => {
    const limit = BUDGETS[family](ctx.config.rateLimit).limit;
    const count = counters.hit(prefix + keyOf(req), limit);
    if (!(count instanceof Promise)) return decide(res, next, limit, count);
    count.then(
      (counted) => decide(res, next, limit, counted),
      (err: Error) => storeFailed(next, err),
    );
  };
}

/** A limiter for one family, rebuilt when a reload changes its window. */
function limiter(ctx: Context, family: Family): RequestHandler {
  let current: { windowSeconds: number; handler: RequestHandler } | undefined;
  return (req, res, next) => {
    const { windowSeconds } = BUDGETS[family](ctx.config.rateLimit);
    if (current?.windowSeconds !== windowSeconds)
      current = { windowSeconds, handler: build(ctx, family, windowSeconds) };
    return current.handler(req, res, next);
  };
}

/**
 * The rate limit of every request under /store and /api: /admin paths count on the admin budget, the rest on
 * the data budget. It follows ctx.config, so a reload applies new limits without a restart.
 */
export function rateLimits(ctx: Context): RequestHandler {
  const data = limiter(ctx, 'data');
  const admin = limiter(ctx, 'admin');
  return (req, res, next) => {
    if (!ctx.config.rateLimit.enabled) return next();
    return (isAdmin(req) ? admin : data)(req, res, next);
  };
}
