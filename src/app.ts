// createApp(deps): the Express apps (data, and admin when it has its own listener) on given connections; never listens.
import express, { type Express, type RequestHandler } from 'express';
import { Cluster } from 'ioredis';
import { answerers } from './admin/aggregate';
import { buildInfo } from './admin/info';
import { adminRoutes } from './admin/routes';
import { type Config, loadConfig } from './config';
import type { Context } from './context';
import { observeRedis } from './engine/run';
import { ApiError } from './errors';
import { Feed } from './feed/feed';
import { changeRoutes } from './feed/routes';
import { admission, HEAVY_AT_ONCE } from './http/admission';
import { Auth } from './http/auth/access';
import { authenticationConfigured } from './http/auth/credentials';
import { refuseOversizedBody } from './http/body-limits';
import { browserChecks } from './http/browsers';
import { chain } from './http/chain';
import { clientIdentity } from './http/client-address';
import { consoleRoutes } from './http/console';
import { Contract, type Operation } from './http/contract';
import { docs } from './http/docs';
import { errorHandler } from './http/error-handler';
import { rateLimits } from './http/rate-limit';
import { requestId } from './http/request-id';
import { fallback, PREFIXES, Routes } from './http/routes';
import { Locks } from './locks/locks';
import { lockRoutes } from './locks/routes';
import type { Logger } from './observability/logger';
import { createTelemetry, observeRequests } from './observability/observe';
import { OPENAPI_FILE } from './paths';
import type { Peers } from './peers';
import { queueRoutes } from './queues/routes';
import { rateLimitRoutes } from './ratelimits/routes';
import { CapabilityWatch } from './redis/capability-watch';
import type { RedisClient } from './redis/client';
import { DurableWriter } from './redis/durable';
import type { Fence } from './redis/failover-fence';
import { ClusterStreams } from './redis/feed-streams';
import { createKeyspace } from './redis/keys';
import type { WaiterPool } from './redis/waiters';
import { createReload } from './reload';
import { familyRoutes } from './routes/families';
import { keyRoutes } from './routes/keys';
import { upstashRoutes } from './upstash/routes';

export { OPENAPI_FILE };

export interface AppDeps {
  config: Config;
  redis: RedisClient;
  /**
   * The rate-limit counters' connection: `limiterConnection(redis)` (see rate-limit.ts), whose short command
   * timeout keeps a hung Redis from holding requests back before the data call.
   */
  limiterRedis: RedisClient;
  /**
   * With SVC_REDIS_WAIT_REPLICAS > 0, the connection that writes go through (`writerConnection(redis)`): their
   * WAITs block it while a replica is away, and must not hold reads back.
   */
  writerRedis?: RedisClient;
  /** With SVC_CHANGES_ENABLED: the change feed reader's connection (`feedConnection(redis)`). */
  feedRedis?: RedisClient;
  /** Behind Sentinel: keeps writes out while a failover is under way (`failoverFence(writers, config)`). */
  fence?: Fence;
  /** The connections of list pops that wait (`new WaiterPool(...)`); without it such a pop answers 503. */
  waiters?: WaiterPool;
  logger: Logger;
  /** The loaded contract (built with the same limits as `config`); loaded from openapi.yaml when not given. */
  contract?: Contract;
  /** How a reload reads the configuration again; `loadConfig()` (environment + SVC_CONFIG_FILE) by default. */
  loadConfig?: () => Config;
  /** In a cluster worker (SVC_WORKERS > 1): the link to the other workers (see peers.ts). */
  peers?: Peers;
}

export interface Apps {
  /** Serves the data API, and the admin API when it shares the data port. */
  data: Express;
  /** Serves the admin API when SVC_ADMIN_PORT differs from SVC_PORT. */
  admin?: Express;
  context: Context;
}

function baseApp(ctx: Context): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', ctx.config.trustProxy);
  app.use(
    chain(
      requestId(ctx.config.requestIdHeader),
      observeRequests(ctx.telemetry, ctx.logger),
      browserChecks(ctx),
      refuseOversizedBody(ctx.config.limits.maxBodyBytes),
    ),
  );
  return app;
}

const ADMIN_PREFIXES = PREFIXES.map((prefix) => `${prefix}/admin`);

/** On the data port when admin has its own listener: a 404 that says where the admin endpoints are. */
function adminElsewhere(port: number): RequestHandler {
  return (req, res) => {
    res.locals.route = 'unknown';
    throw new ApiError(
      'unknown_endpoint',
      `No endpoint ${req.method} ${req.baseUrl}${req.path} on this port: admin endpoints are served on port ${port}`,
    );
  };
}

/**
 * 404/405 for what no route took: each app knows only the operations it serves. Under the prefixes the guards
 * come first, as on the routes: an unknown path is rate limited and needs credentials too.
 */
function finish(
  app: Express,
  ctx: Context,
  guards: RequestHandler,
  served: Operation[],
  adminPort?: number,
): Express {
  app.use([...PREFIXES], guards);
  if (adminPort !== undefined) app.use(ADMIN_PREFIXES, adminElsewhere(adminPort));
  app.use(fallback(served));
  app.use(errorHandler(ctx.logger, () => ctx.config.errorDetails));
  return app;
}

function durableWriter({ config, writerRedis }: AppDeps): DurableWriter | undefined {
  const { waitReplicas, waitTimeoutMs, commandTimeoutMs } = config.redis;
  if (waitReplicas === 0) return undefined;
  if (!writerRedis)
    throw new Error('SVC_REDIS_WAIT_REPLICAS needs the writer connection (AppDeps.writerRedis)');
  return new DurableWriter(writerRedis, waitReplicas, waitTimeoutMs, commandTimeoutMs);
}

/**
 * A reload's first step: the keys file and JWT key read again (a broken one cancels the reload), then the change
 * feed streams of credentials that were removed or changed are closed with that reason.
 */
function reloadCredentials(ctx: Context, auth: Auth, next: Config): string[] {
  const before = auth.current;
  const lines = auth.reload(next);
  const closed = ctx.feed?.hub.dropWhere(
    ({ principal }) => principal !== undefined && !auth.stillValid(principal, before),
    'its credential was removed or changed by a reload: reconnect with a valid credential and resume',
  );
  if (closed)
    lines.push(`${closed} change feed stream${closed === 1 ? '' : 's'} of removed credentials closed`);
  return lines;
}

/** Throws a ConfigError when the API keys or the JWT key are invalid. */
export function createApp(deps: AppDeps): Apps {
  const { config } = deps;
  const auth = new Auth(config);
  const keyspace = createKeyspace(config.keyPrefix);
  const ctx: Context = {
    config,
    redis: deps.redis,
    limiterRedis: deps.limiterRedis,
    logger: deps.logger,
    keyspace,
    capabilities: new CapabilityWatch(deps.redis, config.redis.maxArguments || null, deps.logger),
    store: {
      redis: deps.redis,
      keyspace,
      deadlineMs: config.redis.commandTimeoutMs,
      maxArguments: config.redis.maxArguments,
      durable: durableWriter(deps),
      fence: deps.fence,
      waiters: deps.waiters,
      changes: config.changes.enabled ? { key: keyspace.changes, maxlen: config.changes.maxlen } : undefined,
      streams:
        config.changes.enabled && deps.redis instanceof Cluster
          ? new ClusterStreams(deps.redis, keyspace.changesIn)
          : undefined,
    },
    contract: deps.contract ?? new Contract(OPENAPI_FILE, config.limits),
    locks: new Locks(
      () => ctx.store,
      () => ctx.telemetry.metrics,
    ),
    access: auth,
    served: [],
    telemetry: createTelemetry(config),
    peers: deps.peers,
    feed: undefined,
    // A reload re-reads the keys file and JWT key first: a broken one cancels the whole reload.
    onReload: [(next) => reloadCredentials(ctx, auth, next)],
    authConfigured: () => authenticationConfigured(ctx.config),
    // createReload needs the finished context (it replaces ctx.config); it exists before any request can call this.
    reload: () => reload(),
  };
  if (deps.feedRedis)
    ctx.feed = new Feed(
      deps.redis,
      deps.feedRedis,
      keyspace,
      () => ctx.config,
      ctx.telemetry.metrics,
      deps.logger,
      ctx.store.streams,
    );
  const reload = createReload(ctx, deps.loadConfig ?? (() => loadConfig()));
  deps.peers?.answerWith(answerers(ctx));
  observeRedis(deps.redis, ctx.telemetry.redis);

  const guards = chain(rateLimits(ctx), auth.authenticate);
  const heavy = admission(
    HEAVY_AT_ONCE,
    // The longest a heavy request may then wait on Redis: a durable write's deadline includes the replicas' WAIT.
    () => Math.max(ctx.config.redis.commandTimeoutMs, ctx.store.durable?.deadlineMs ?? 0),
    clientIdentity(config.ipv6PrefixLength),
  );
  const app = baseApp(ctx);
  // /upstash first: its few layers cost a /store request little, while the router would try every data route's
  // paths (well over a hundred layers) on each /upstash request (issue 36). Their paths do not overlap.
  if (config.upstash.enabled) upstashRoutes(app, ctx, guards, heavy);
  const data = new Routes(ctx, app, guards, heavy);
  familyRoutes(data, ctx, config.limits);
  keyRoutes(data, ctx);
  changeRoutes(data, ctx);
  queueRoutes(data, ctx);
  lockRoutes(data, ctx);
  rateLimitRoutes(data, ctx);
  const ownListener = config.admin.enabled && config.admin.port !== config.port;
  const adminApp = ownListener ? baseApp(ctx) : app;
  const admin = config.admin.enabled ? new Routes(ctx, adminApp, guards) : undefined;
  if (admin) adminRoutes(admin, ctx);

  // After the API: a router that matches nothing hands the request on through setImmediate.
  const { name, version } = buildInfo();
  const links: Record<string, string> = { docs: '/docs', openapi: '/openapi.yaml' };
  if (admin && !ownListener) links.health = '/store/admin/health';
  if (config.consoleEnabled) links.console = '/console/';
  app.use(docs(OPENAPI_FILE, { name, version, links }));
  if (config.consoleEnabled) app.use(consoleRoutes());
  const served = [...data.served, ...(admin && !ownListener ? admin.served : [])];
  const elsewhere = admin && ownListener ? config.admin.port : undefined;
  const apps: Apps = { data: finish(app, ctx, guards, served, elsewhere), context: ctx };
  if (admin && ownListener) apps.admin = finish(adminApp, ctx, guards, admin.served);
  return apps;
}
