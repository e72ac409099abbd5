// SVC_* settings (environment, optionally a config file) -> one validated, typed, frozen Config.
import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import { parse as parseYaml } from 'yaml';
import type { ConfigOf, RawValue } from './setting';
import { SETTING_LIST, SETTINGS, type SettingName } from './settings';

/** The running configuration: one readonly leaf per setting of the table in settings.ts. */
export type Config = ConfigOf<typeof SETTINGS>;

type Raw = { [K in SettingName]: RawValue<(typeof SETTINGS)[K]> };

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const ajv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true, strict: true });
const validateRaw = ajv.compile({
  type: 'object',
  properties: Object.fromEntries(SETTING_LIST.map(([name, s]) => [name, s.schema])),
  additionalProperties: true,
});

/** Reads the optional config file (JSON or YAML object of SVC_* names). Problems are collected, not thrown. */
function readConfigFile(path: string, problems: string[]): Record<string, unknown> {
  try {
    const data = parseYaml(readFileSync(path, 'utf8'));
    if (data === null || data === undefined) return {};
    if (typeof data !== 'object' || Array.isArray(data))
      throw new Error('expected an object of SVC_* settings');
    for (const name of Object.keys(data)) {
      if (!(name in SETTINGS)) problems.push(`${path}: unknown setting ${name}`);
    }
    return data as Record<string, unknown>;
  } catch (err) {
    // Parser messages quote the file around the problem, which may hold a password: say only where it is.
    const e = err as Error & { code?: string; linePos?: { line: number }[] };
    const where = e.linePos?.[0] ? ` (line ${e.linePos[0].line})` : '';
    const why =
      e.code === 'ENOENT' ? 'no such file' : e.name === 'Error' ? e.message : 'not valid JSON or YAML';
    problems.push(`SVC_CONFIG_FILE ${path}: ${why}${where}`);
    return {};
  }
}

/**
 * Builds the Config from the environment and, when SVC_CONFIG_FILE is set, that file.
 * Precedence: environment, then file, then defaults. Throws ConfigError listing every problem.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const fromEnv: Record<string, unknown> = {};
  for (const name of Object.keys(SETTINGS)) {
    const value = env[name];
    if (value !== undefined && value !== '') fromEnv[name] = value;
  }
  const file =
    typeof fromEnv.SVC_CONFIG_FILE === 'string' ? readConfigFile(fromEnv.SVC_CONFIG_FILE, problems) : {};
  const raw: Record<string, unknown> = { ...file, ...fromEnv };
  if (!validateRaw(raw)) {
    for (const e of validateRaw.errors ?? [])
      problems.push(`${e.instancePath.slice(1) || 'config'} ${e.message}`);
  }
  const r = raw as Raw;
  if (r.SVC_JWT_SECRET && r.SVC_JWT_PUBLIC_KEY_FILE) {
    problems.push('SVC_JWT_SECRET and SVC_JWT_PUBLIC_KEY_FILE are exclusive: set one');
  }
  // Node refuses a headers timeout longer than the request timeout (the headers are part of the request).
  if (r.SVC_REQUEST_TIMEOUT_MS > 0 && r.SVC_HEADERS_TIMEOUT_MS > r.SVC_REQUEST_TIMEOUT_MS) {
    problems.push('SVC_HEADERS_TIMEOUT_MS must not exceed SVC_REQUEST_TIMEOUT_MS (unless that is 0)');
  }
  if (r.SVC_REDIS_SENTINELS && r.SVC_REDIS_CLUSTER_NODES) {
    problems.push('SVC_REDIS_SENTINELS and SVC_REDIS_CLUSTER_NODES are exclusive: set one');
  }
  problems.push(...tlsProblems(r));
  // Keyspace notifications are per node and the notifier's lock is one key: not built for a Cluster.
  if (r.SVC_CHANGES_EXPIRED && r.SVC_REDIS_CLUSTER_NODES) {
    problems.push(
      'SVC_CHANGES_EXPIRED is not supported with SVC_REDIS_CLUSTER_NODES (Redis Cluster): turn it off',
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(build(r));
}

/** The TLS settings need TLS on (a rediss:// URL), and a client certificate comes with its key. */
function tlsProblems(r: Raw): string[] {
  const problems: string[] = [];
  const set = (['CA_FILE', 'CERT_FILE', 'KEY_FILE', 'SERVER_NAME'] as const).filter(
    (name) => r[`SVC_REDIS_TLS_${name}`] !== undefined,
  );
  if (set.length > 0 && !/^rediss:/.test(r.SVC_REDIS_URL))
    problems.push(
      `SVC_REDIS_TLS_${set[0]} is set but SVC_REDIS_URL is not rediss://: start it with rediss:// to turn TLS on`,
    );
  if ((r.SVC_REDIS_TLS_CERT_FILE === undefined) !== (r.SVC_REDIS_TLS_KEY_FILE === undefined))
    problems.push('SVC_REDIS_TLS_CERT_FILE and SVC_REDIS_TLS_KEY_FILE go together: set both or neither');
  return problems;
}

/** Config from validated raw values: each setting's value (defaulted, parsed) at its path, in table order. */
function build(raw: Raw): Config {
  const config: Record<string, unknown> = {};
  for (const [name, s] of SETTING_LIST) {
    let value: unknown = raw[name];
    if (value === undefined && s.defaultFrom) value = raw[s.defaultFrom as SettingName];
    if (s.parse) value = (s.parse as (v: unknown) => unknown)(value);
    setPath(config, s.path, value);
  }
  return config as Config;
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const [head, ...rest] = path.split('.') as [string, ...string[]];
  if (rest.length === 0) {
    target[head] = value;
    return;
  }
  target[head] ??= {};
  setPath(target[head] as Record<string, unknown>, rest.join('.'), value);
}

/** A setting's value in a Config (or undefined when unset). */
export function settingValue(config: Config, name: SettingName): unknown {
  return SETTINGS[name].path
    .split('.')
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], config);
}

/** `base` with the values of `names` taken from `from`; both stay untouched, the result is frozen too. */
export function withSettings(base: Config, from: Config, names: readonly SettingName[]): Config {
  const copy = structuredClone(base) as Record<string, unknown>;
  for (const name of names) setPath(copy, SETTINGS[name].path, settingValue(from, name));
  return deepFreeze(copy) as Config;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
