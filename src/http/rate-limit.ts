// Per-client-IP rate limits with counters in Redis (shared by every instance): one for data, one for admin.
import type { Request, RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { Cluster } from 'ioredis';
import type { Config } from '../config';
import { ApiError } from '../errors';
import { clientNetworks } from './client-address';
import type { Context } from './context';
import { CountingRedisStore } from './rate-limit-store';
import { PREFIXES } from './routes';
import { markUncounted } from './uncounted';

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

// Case-insensitive as Express's routing is: `/STORE/ADMIN/stats` is served, so it counts on the admin budget.
const ADMIN_PATH = new RegExp(`^(${PREFIXES.join('|')})/admin(/|$)`, 'i');
/** Works wherever the middleware is mounted (at the root or under a prefix). */
const isAdmin = (req: Request) => ADMIN_PATH.test(req.baseUrl + req.path);

/**
 * How long the limiter then leaves Redis alone after a counter took longer than its connection's command timeout
 * (LIMITER_COMMAND_TIMEOUT_MS, redis/client.ts): without it a hung Redis would hold each request for a whole
 * timeout per counter call (rate-limit-redis's own calls retry once) before the data call even starts.
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
type Guard = ReturnType<typeof backoff>;

/**
 * rate-limit-redis sends raw commands, on the limiter's own connection (ctx.limiterRedis, see limiterConnection in redis/client.ts).
 * On a Cluster the store's scripts must be loaded on every master.
 */
function sendCommand(ctx: Context, guard: Guard) {
  const send = (name: string, args: string[]): Promise<unknown> => {
    if (ctx.limiterRedis.isCluster && name.toUpperCase() === 'SCRIPT') {
      const masters = (ctx.limiterRedis as Cluster).nodes('master');
      return Promise.all(masters.map((node) => node.call(name, ...args))).then((replies) => replies[0]);
    }
    return ctx.limiterRedis.call(name, ...args);
  };
  return (...args: string[]) => {
    const [name, ...rest] = args as [string, ...string[]];
    return guard(() => send(name, rest) as Promise<string | number>);
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
 * The client's key: its address, or for IPv6 its network (SVC_IPV6_PREFIX_LENGTH, see client-address.ts).
 * Synchronous, unlike the default. Like the default, it warns once about a proxy setting that defeats the limit.
 */
function clientKey(ctx: Context): (req: Request) => string {
  const network = clientNetworks(ctx.config.ipv6PrefixLength);
  let warned = false;
  return (req) => {
    if (!warned) {
      const warning = proxyWarning(req, ctx.config.trustProxy);
      if (warning) ctx.logger.warn('rate limiter', { cause: warning });
      warned = warning !== undefined;
    }
    return network(req.ip ?? '');
  };
}

function tooMany(req: Request, family: Family, windowSeconds: number): ApiError {
  const info = (req as Request & { rateLimit?: { limit: number; resetTime?: Date } }).rateLimit;
  const seconds = info?.resetTime ? Math.ceil((info.resetTime.getTime() - Date.now()) / 1000) : 1;
  const retryAfter = Math.max(1, seconds);
  const what = family === 'admin' ? 'admin requests' : 'requests';
  return new ApiError(
    'rate_limit_exceeded',
    `Too many ${what}: limit of ${info?.limit} per ${windowSeconds} seconds reached; retry in ${retryAfter} s`,
    { retryAfter },
  );
}

/**
 * One express-rate-limit instance for a window length; the limit itself is read from ctx.config per request. Its
 * store (CountingRedisStore) counts every request in Redis but answers a client far from its limit at once
 * (rate-counters.ts): exact with one instance; the bound with several is in docs/performance.md.
 */
function build(ctx: Context, family: Family, windowSeconds: number): RequestHandler {
  const guard = backoff();
  const limit = () => BUDGETS[family](ctx.config.rateLimit).limit;
  const store = new CountingRedisStore(
    { sendCommand: sendCommand(ctx, guard), prefix: ctx.keyspace.internal('rl', family, '') },
    (key, by, windowMs) => guard(() => ctx.limiterRedis.rateLimitIncrement(key, by, windowMs)),
    limit,
  );
  // rate-limit-redis loads its scripts at once (its increment script unused here); while Redis is down that
  // fails and is retried on use.
  for (const loading of [store.incrementScriptSha, store.getScriptSha]) loading.catch(() => {});
  return rateLimit({
    windowMs: windowSeconds * 1000,
    limit,
    standardHeaders: 'draft-6',
    legacyHeaders: false,
    store,
    // A counter call that fails rejects the handler's promise: see `limiter` for what happens then.
    passOnStoreError: false,
    keyGenerator: clientKey(ctx),
    handler: (req, _res, next) => next(tooMany(req, family, windowSeconds)),
    // Limiters are (re)built on first use and after a reload changes the window, i.e. inside a request.
    // keyGeneratorIpFallback: clientKey groups IPv6 addresses itself (client-address.ts), as ipKeyGenerator would.
    validate: { creationStack: false, keyGeneratorIpFallback: false },
    logger: {
      warn: (err) => ctx.logger.warn('rate limiter', { cause: (err as Error).message }),
      error: (err) => {
        const cause = (err as Error).message;
        ctx.logger.warn('rate limiter', { cause });
      },
    },
  });
}

/** A limiter for one family, rebuilt when a reload changes its window. */
function limiter(ctx: Context, family: Family): RequestHandler {
  let current: { windowSeconds: number; handler: RequestHandler } | undefined;
  return (req, res, next) => {
    const { windowSeconds } = BUDGETS[family](ctx.config.rateLimit);
    if (current?.windowSeconds !== windowSeconds)
      current = { windowSeconds, handler: build(ctx, family, windowSeconds) };
    // express-rate-limit hands a failed counter call to `next` as an error (passOnStoreError: false); our 429 is
    // an ApiError and goes on as it is.
    return current.handler(req, res, (err?: unknown) => {
      if (err === undefined || err instanceof ApiError || typeof err === 'string') return next(err);
      ctx.logger.debug('rate limiter store failed; authentication decides', {
        cause: (err as Error).message,
      });
      markUncounted(res);
      next();
    });
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
