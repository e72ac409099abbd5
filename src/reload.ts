// Reloading the configuration at run time (admin endpoint and SIGHUP): apply the live settings, name the rest.
import { type Config, ConfigError, LIVE_SETTINGS } from './config';
import { ApiError } from './errors';
import type { Context } from './http/context';
import { reconfigureLogger } from './observability/logger';

/** Config paths -> the setting that sets them, to name changes in the reload message. */
const SETTING_OF: Record<string, string> = {
  port: 'SVC_PORT',
  host: 'SVC_HOST',
  maxConnections: 'SVC_MAX_CONNECTIONS',
  maxConnectionsPerIp: 'SVC_MAX_CONNECTIONS_PER_IP',
  headersTimeoutMs: 'SVC_HEADERS_TIMEOUT_MS',
  requestTimeoutMs: 'SVC_REQUEST_TIMEOUT_MS',
  keepAliveTimeoutMs: 'SVC_KEEP_ALIVE_TIMEOUT_MS',
  workers: 'SVC_WORKERS',
  shutdownTimeoutMs: 'SVC_SHUTDOWN_TIMEOUT_MS',
  'redis.url': 'SVC_REDIS_URL',
  'redis.sentinels': 'SVC_REDIS_SENTINELS',
  'redis.sentinelName': 'SVC_REDIS_SENTINEL_NAME',
  'redis.clusterNodes': 'SVC_REDIS_CLUSTER_NODES',
  'redis.commandTimeoutMs': 'SVC_REDIS_COMMAND_TIMEOUT_MS',
  'redis.waitReplicas': 'SVC_REDIS_WAIT_REPLICAS',
  'redis.waitTimeoutMs': 'SVC_REDIS_WAIT_TIMEOUT_MS',
  'redis.connectTimeoutMs': 'SVC_REDIS_CONNECT_TIMEOUT_MS',
  keyPrefix: 'SVC_KEY_PREFIX',
  'limits.maxValueBytes': 'SVC_MAX_VALUE_BYTES',
  'limits.maxBodyBytes': 'SVC_MAX_BODY_BYTES',
  'limits.batchMaxOperations': 'SVC_BATCH_MAX_OPERATIONS',
  'admin.enabled': 'SVC_ADMIN_ENABLED',
  'admin.host': 'SVC_ADMIN_HOST',
  'admin.port': 'SVC_ADMIN_PORT',
  'rateLimit.enabled': 'SVC_RATE_LIMIT_ENABLED',
  'rateLimit.requests': 'SVC_RATE_LIMIT_REQUESTS',
  'rateLimit.windowSeconds': 'SVC_RATE_LIMIT_WINDOW',
  'rateLimit.adminRequests': 'SVC_ADMIN_RATE_LIMIT_REQUESTS',
  'rateLimit.adminWindowSeconds': 'SVC_ADMIN_RATE_LIMIT_WINDOW',
  trustProxy: 'SVC_TRUST_PROXY',
  'auth.protectedMode': 'SVC_PROTECTED_MODE',
  'auth.apiKeys': 'SVC_API_KEYS',
  'auth.apiKeysFile': 'SVC_API_KEYS_FILE',
  'auth.jwtSecret': 'SVC_JWT_SECRET',
  'auth.jwtPublicKeyFile': 'SVC_JWT_PUBLIC_KEY_FILE',
  'auth.jwtIssuer': 'SVC_JWT_ISSUER',
  'auth.jwtAudience': 'SVC_JWT_AUDIENCE',
  metricsEnabled: 'SVC_METRICS_ENABLED',
  'log.level': 'SVC_LOG_LEVEL',
  'log.format': 'SVC_LOG_FORMAT',
  errorDetails: 'SVC_ERROR_DETAILS',
  requestIdHeader: 'SVC_REQUEST_ID_HEADER',
  clientsMax: 'SVC_CLIENTS_MAX',
  configFile: 'SVC_CONFIG_FILE',
};

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The dotted paths of the leaves that differ between two configs. */
function changedPaths(a: unknown, b: unknown, path = ''): string[] {
  if (isRecord(a) && isRecord(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => changedPaths(a[k], b[k], path ? `${path}.${k}` : k));
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [path];
}

const isLive = (path: string) => (LIVE_SETTINGS as readonly string[]).includes(path.split('.')[0] as string);

function describe(applied: string[], restart: string[], other: string[]): string {
  if (applied.length + restart.length + other.length === 0) return 'Configuration reloaded; nothing changed';
  const parts = ['Configuration reloaded'];
  if (applied.length > 0) parts.push(`applied ${applied.join(', ')}`);
  parts.push(...other);
  if (restart.length > 0)
    parts.push(`${restart.join(', ')} changed and ${restart.length > 1 ? 'need' : 'needs'} a restart`);
  return parts.join('; ');
}

/**
 * Re-reads the configuration with `load` and applies the live settings (LIVE_SETTINGS): the new config
 * keeps the running values of everything else, which needs a restart. The `onReload` hooks (the auth
 * family reloads its keys, and says which changed) run first; if loading or a hook fails, nothing is applied,
 * a warning lists the problems, and the error is a 500 server_error whose message lists them too.
 */
export function createReload(ctx: Context, load: () => Config): () => Promise<string> {
  return async () => {
    const previous = ctx.config;
    let next: Config;
    const other: string[] = [];
    try {
      next = load();
      for (const hook of ctx.onReload) other.push(...((await hook(next)) ?? []));
    } catch (err) {
      const problems = err instanceof ConfigError ? err.problems : [(err as Error).message];
      // A broken file is an operator's to fix, not a bug: a warning without a stack.
      ctx.logger.warn('configuration not reloaded; the running configuration stays', { problems });
      throw new ApiError('server_error', `Configuration not reloaded: ${problems.join('; ')}`, {
        cause: err,
      });
    }
    const live = Object.fromEntries(LIVE_SETTINGS.map((name) => [name, next[name]]));
    ctx.config = Object.freeze({ ...previous, ...live }) as Config;
    if (changedPaths(previous.log, next.log).length > 0) reconfigureLogger(ctx.logger, next.log);
    const changes = changedPaths(previous, next).map((path) => ({ path, setting: SETTING_OF[path] ?? path }));
    const applied = changes.filter((c) => isLive(c.path)).map((c) => c.setting);
    const restart = changes.filter((c) => !isLive(c.path)).map((c) => c.setting);
    const message = describe(applied, restart, other);
    ctx.logger.info(message);
    return message;
  };
}
