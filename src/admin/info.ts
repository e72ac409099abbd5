// The info record: version, build date, the running configuration with secrets redacted, and features.
import { readFileSync, statSync } from 'node:fs';
import type { Config } from '../config';
import { PACKAGE_FILE } from '../paths';
import { redactUrl, redisMode } from '../redis/client';

export interface BuildInfo {
  /** The package name, as `GET /` shows it. */
  name: string;
  version: string;
  /** When the running code was built: the modification time of this compiled file (dist/ after `npm run build`). */
  buildDate: string;
}

export function buildInfo(): BuildInfo {
  const { name, version } = JSON.parse(readFileSync(PACKAGE_FILE, 'utf8')) as BuildInfo;
  return { name, version, buildDate: statSync(__filename).mtime.toISOString() };
}

const nodes = (list: ReadonlyArray<{ host: string; port: number }>) =>
  list.map((n) => `${n.host}:${n.port}`).join(',');

/** Where the data lives, without credentials: the redacted URL, or the Sentinel / Cluster nodes. */
export function databaseUrl(config: Config): string {
  const { redis } = config;
  if (redis.clusterNodes) return `redis-cluster://${nodes(redis.clusterNodes)}`;
  if (redis.sentinels) return `redis-sentinel://${nodes(redis.sentinels)}/${redis.sentinelName}`;
  return redactUrl(redis.url);
}

/** The running configuration as the info endpoint shows it; API keys, JWT secrets and passwords never appear. */
export function publicConfig(config: Config): Record<string, unknown> {
  return {
    port: config.port,
    host: config.host,
    database_url: databaseUrl(config),
    database_type: redisMode(config),
    max_connections: config.maxConnections,
    max_connections_per_ip: config.maxConnectionsPerIp,
    headers_timeout_ms: config.headersTimeoutMs,
    request_timeout_ms: config.requestTimeoutMs,
    keep_alive_timeout_ms: config.keepAliveTimeoutMs,
    rate_limit_enabled: config.rateLimit.enabled,
    rate_limit_requests: config.rateLimit.requests,
    rate_limit_window: config.rateLimit.windowSeconds,
    admin_rate_limit_requests: config.rateLimit.adminRequests,
    admin_rate_limit_window: config.rateLimit.adminWindowSeconds,
    admin_enabled: config.admin.enabled,
    admin_host: config.admin.host,
    admin_port: config.admin.port,
    key_prefix: config.keyPrefix,
    max_value_bytes: config.limits.maxValueBytes,
    max_body_bytes: config.limits.maxBodyBytes,
    batch_max_operations: config.limits.batchMaxOperations,
    protected_mode: config.auth.protectedMode,
    metrics_enabled: config.metricsEnabled,
    log_level: config.log.level,
    log_format: config.log.format,
    error_details: config.errorDetails,
  };
}
