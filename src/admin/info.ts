// The info record: version, build date, the running configuration with secrets redacted, features, the server's capabilities.
import { readFileSync, statSync } from 'node:fs';
import { type Config, settingValue } from '../config';
import { PACKAGE_FILE } from '../paths';
import type { Capabilities } from '../redis/capabilities';
import { redactUrl, redisMode } from '../redis/client';
import type { ScriptMode } from '../redis/functions';
import { SETTING_LIST } from '../settings';

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

/**
 * The running configuration as the info endpoint shows it: each setting with an `info` name in settings.ts
 * (secrets have none), and where the data lives. API keys, JWT secrets and passwords never appear.
 */
export function publicConfig(config: Config): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const [name, s] of SETTING_LIST) if (s.info) shown[s.info] = settingValue(config, name);
  return {
    port: shown.port,
    host: shown.host,
    database_url: databaseUrl(config),
    database_type: redisMode(config),
    ...shown,
  };
}

/**
 * The capability probe's answer for health and info (null until Redis was reached once), with how the service's
 * scripts run: as a Functions library (FCALL), as scripts (EVALSHA) where FUNCTION is refused, or 'pending' while
 * the library loads.
 */
export function serverRecord(
  capabilities: Capabilities | undefined,
  scripts: ScriptMode,
): Record<string, unknown> | null {
  if (!capabilities) return null;
  const { engine, version, cluster, functions, maxArguments, refused, probedAt } = capabilities;
  return {
    engine,
    version,
    cluster,
    functions,
    scripts,
    max_arguments: maxArguments,
    probed_at: probedAt,
    unavailable: refused.map(({ command, reason, affects }) => ({ command, reason, affects })),
  };
}
