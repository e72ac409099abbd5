// SVC_* settings (environment, optionally a config file) -> one validated, typed, frozen Config.
import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import { parse as parseYaml } from 'yaml';

const int = (def: number, minimum: number, maximum = 2147483647) =>
  ({ type: 'integer', default: def, minimum, maximum }) as const;
const bool = (def: boolean) => ({ type: 'boolean', default: def }) as const;
function str(): { type: 'string' };
function str<D extends string | undefined>(def: D, extra?: object): { type: 'string'; default: D };
function str(def?: string, extra: object = {}) {
  return { type: 'string', ...(def === undefined ? {} : { default: def }), ...extra };
}
const port = (def: number) => int(def, 0, 65535);
/** A port with no default of its own: loadConfig() derives it from another setting. */
const derivedPort = () => ({ type: 'integer', minimum: 0, maximum: 65535 }) as const;

/** Every setting, with its default, type and range. The README's configuration table mirrors it. */
export const SETTINGS = {
  SVC_PORT: port(8080),
  SVC_HOST: str('0.0.0.0'),
  SVC_MAX_CONNECTIONS: int(10000, 1),
  SVC_MAX_CONNECTIONS_PER_IP: int(256, 0),
  SVC_HEADERS_TIMEOUT_MS: int(10000, 1),
  SVC_REQUEST_TIMEOUT_MS: int(60000, 0),
  SVC_KEEP_ALIVE_TIMEOUT_MS: int(65000, 1),
  SVC_WORKERS: int(1, 1, 64),
  SVC_SHUTDOWN_TIMEOUT_MS: int(10000, 0),
  SVC_REDIS_URL: str('redis://127.0.0.1:6379', { pattern: '^rediss?://' }),
  SVC_REDIS_SENTINELS: str(undefined, { pattern: '^[^,:]+:\\d+(,[^,:]+:\\d+)*$' }),
  SVC_REDIS_SENTINEL_NAME: str('mymaster'),
  SVC_REDIS_CLUSTER_NODES: str(undefined, { pattern: '^[^,:]+:\\d+(,[^,:]+:\\d+)*$' }),
  SVC_REDIS_COMMAND_TIMEOUT_MS: int(1000, 1),
  SVC_REDIS_CONNECT_TIMEOUT_MS: int(2000, 1),
  SVC_REDIS_WAIT_REPLICAS: int(0, 0, 64),
  SVC_REDIS_WAIT_TIMEOUT_MS: int(1000, 1),
  SVC_KEY_PREFIX: str('', { pattern: '^[A-Za-z0-9_.:{}-]*$', maxLength: 256 }),
  SVC_MAX_VALUE_BYTES: int(1048576, 1),
  SVC_MAX_BODY_BYTES: int(10485760, 1),
  SVC_BATCH_MAX_OPERATIONS: int(1000, 1, 100000),
  SVC_ADMIN_ENABLED: bool(true),
  SVC_ADMIN_HOST: str('0.0.0.0'),
  // Unset: the data port, so that SVC_PORT alone moves the whole service.
  SVC_ADMIN_PORT: derivedPort(),
  SVC_RATE_LIMIT_ENABLED: bool(true),
  SVC_RATE_LIMIT_REQUESTS: int(100, 1),
  SVC_RATE_LIMIT_WINDOW: int(60, 1),
  SVC_ADMIN_RATE_LIMIT_REQUESTS: int(1000, 1),
  SVC_ADMIN_RATE_LIMIT_WINDOW: int(60, 1),
  SVC_TRUST_PROXY: str('false'),
  SVC_PROTECTED_MODE: bool(true),
  SVC_API_KEYS: str(),
  SVC_API_KEYS_FILE: str(),
  SVC_JWT_SECRET: str(undefined, { minLength: 32 }),
  SVC_JWT_PUBLIC_KEY_FILE: str(),
  SVC_JWT_ISSUER: str(),
  SVC_JWT_AUDIENCE: str(),
  SVC_METRICS_ENABLED: bool(true),
  SVC_LOG_LEVEL: str('info', { enum: ['debug', 'info', 'warn', 'error'] }),
  SVC_LOG_FORMAT: str('text', { enum: ['json', 'text'] }),
  SVC_ERROR_DETAILS: bool(true),
  SVC_REQUEST_ID_HEADER: str('X-Request-ID', { pattern: '^[A-Za-z0-9-]{1,64}$' }),
  SVC_CLIENTS_MAX: int(1000, 1),
  SVC_CONFIG_FILE: str(),
} as const;

export type SettingName = keyof typeof SETTINGS;
export type Raw = {
  [K in SettingName]: (typeof SETTINGS)[K] extends { type: 'integer'; default: number }
    ? number
    : (typeof SETTINGS)[K] extends { type: 'integer' }
      ? number | undefined
      : (typeof SETTINGS)[K] extends { type: 'boolean' }
        ? boolean
        : (typeof SETTINGS)[K] extends { default: string }
          ? string
          : string | undefined;
};

export type Config = Readonly<{
  port: number;
  host: string;
  maxConnections: number;
  /** Open connections per client socket address (per process); 0: no cap. */
  maxConnectionsPerIp: number;
  /** Node's headersTimeout, requestTimeout (0: none) and keepAliveTimeout. */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  workers: number;
  shutdownTimeoutMs: number;
  redis: Readonly<{
    url: string;
    sentinels?: ReadonlyArray<{ host: string; port: number }>;
    sentinelName: string;
    clusterNodes?: ReadonlyArray<{ host: string; port: number }>;
    commandTimeoutMs: number;
    connectTimeoutMs: number;
    /** Replicas that must confirm a write (WAIT) before it is acknowledged; 0 acknowledges on the primary's reply. */
    waitReplicas: number;
    waitTimeoutMs: number;
  }>;
  keyPrefix: string;
  limits: Readonly<{ maxValueBytes: number; maxBodyBytes: number; batchMaxOperations: number }>;
  admin: Readonly<{ enabled: boolean; host: string; port: number }>;
  rateLimit: Readonly<{
    enabled: boolean;
    requests: number;
    windowSeconds: number;
    adminRequests: number;
    adminWindowSeconds: number;
  }>;
  trustProxy: boolean | number | string;
  auth: Readonly<{
    protectedMode: boolean;
    apiKeys?: string;
    apiKeysFile?: string;
    jwtSecret?: string;
    jwtPublicKeyFile?: string;
    jwtIssuer?: string;
    jwtAudience?: string;
  }>;
  metricsEnabled: boolean;
  log: Readonly<{ level: 'debug' | 'info' | 'warn' | 'error'; format: 'json' | 'text' }>;
  errorDetails: boolean;
  requestIdHeader: string;
  clientsMax: number;
  configFile?: string;
}>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const ajv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true, strict: true });
const validateRaw = ajv.compile({ type: 'object', properties: SETTINGS, additionalProperties: true });

const hostPorts = (list?: string) =>
  list?.split(',').map((hp) => {
    const [host = '', p = ''] = hp.split(':');
    return { host, port: Number(p) };
  });

function parseTrustProxy(value: string): boolean | number | string {
  if (value === 'true' || value === 'false') return value === 'true';
  return /^\d+$/.test(value) ? Number(value) : value;
}

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
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze({
    port: r.SVC_PORT,
    host: r.SVC_HOST,
    maxConnections: r.SVC_MAX_CONNECTIONS,
    maxConnectionsPerIp: r.SVC_MAX_CONNECTIONS_PER_IP,
    headersTimeoutMs: r.SVC_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: r.SVC_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: r.SVC_KEEP_ALIVE_TIMEOUT_MS,
    workers: r.SVC_WORKERS,
    shutdownTimeoutMs: r.SVC_SHUTDOWN_TIMEOUT_MS,
    redis: {
      url: r.SVC_REDIS_URL,
      sentinels: hostPorts(r.SVC_REDIS_SENTINELS),
      sentinelName: r.SVC_REDIS_SENTINEL_NAME,
      clusterNodes: hostPorts(r.SVC_REDIS_CLUSTER_NODES),
      commandTimeoutMs: r.SVC_REDIS_COMMAND_TIMEOUT_MS,
      connectTimeoutMs: r.SVC_REDIS_CONNECT_TIMEOUT_MS,
      waitReplicas: r.SVC_REDIS_WAIT_REPLICAS,
      waitTimeoutMs: r.SVC_REDIS_WAIT_TIMEOUT_MS,
    },
    keyPrefix: r.SVC_KEY_PREFIX,
    limits: {
      maxValueBytes: r.SVC_MAX_VALUE_BYTES,
      maxBodyBytes: r.SVC_MAX_BODY_BYTES,
      batchMaxOperations: r.SVC_BATCH_MAX_OPERATIONS,
    },
    admin: {
      enabled: r.SVC_ADMIN_ENABLED,
      host: r.SVC_ADMIN_HOST,
      port: r.SVC_ADMIN_PORT ?? r.SVC_PORT,
    },
    rateLimit: {
      enabled: r.SVC_RATE_LIMIT_ENABLED,
      requests: r.SVC_RATE_LIMIT_REQUESTS,
      windowSeconds: r.SVC_RATE_LIMIT_WINDOW,
      adminRequests: r.SVC_ADMIN_RATE_LIMIT_REQUESTS,
      adminWindowSeconds: r.SVC_ADMIN_RATE_LIMIT_WINDOW,
    },
    trustProxy: parseTrustProxy(r.SVC_TRUST_PROXY),
    auth: {
      protectedMode: r.SVC_PROTECTED_MODE,
      apiKeys: r.SVC_API_KEYS,
      apiKeysFile: r.SVC_API_KEYS_FILE,
      jwtSecret: r.SVC_JWT_SECRET,
      jwtPublicKeyFile: r.SVC_JWT_PUBLIC_KEY_FILE,
      jwtIssuer: r.SVC_JWT_ISSUER,
      jwtAudience: r.SVC_JWT_AUDIENCE,
    },
    metricsEnabled: r.SVC_METRICS_ENABLED,
    log: {
      level: r.SVC_LOG_LEVEL as Config['log']['level'],
      format: r.SVC_LOG_FORMAT as Config['log']['format'],
    },
    errorDetails: r.SVC_ERROR_DETAILS,
    requestIdHeader: r.SVC_REQUEST_ID_HEADER,
    clientsMax: r.SVC_CLIENTS_MAX,
    configFile: r.SVC_CONFIG_FILE,
  });
}

/** Settings that apply without a restart when the configuration is reloaded. */
export const LIVE_SETTINGS = ['rateLimit', 'log', 'errorDetails', 'metricsEnabled', 'auth'] as const;

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
