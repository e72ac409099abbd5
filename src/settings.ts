// Every SVC_* setting, declared once: where it goes in Config, its schema, reload and info behaviour, meaning.
import { hostPorts, parseOrigins, parseTrustProxy, type Setting } from './setting';

const int = (def: number, minimum: number, maximum = 2147483647) =>
  ({ type: 'integer', default: def, minimum, maximum }) as const;
const bool = (def: boolean) => ({ type: 'boolean', default: def }) as const;
function str(): { type: 'string' };
function str<D extends string | undefined>(def: D, extra?: object): { type: 'string'; default: D };
function str(def?: string, extra: object = {}) {
  return { type: 'string', ...(def === undefined ? {} : { default: def }), ...extra };
}
const oneOf = <const E extends readonly string[]>(values: E, def: E[number]) =>
  ({ type: 'string', enum: values, default: def }) as const;
const port = (def: number) => int(def, 0, 65535);
/** No default of its own: `defaultFrom` names the setting whose value it takes when unset. */
const derivedPort = () => ({ type: 'integer', minimum: 0, maximum: 65535 }) as const;
const HOST_PORTS = { pattern: '^[^,:]+:\\d+(,[^,:]+:\\d+)*$' };

/**
 * The order is Config's key order, which is the order reload names changes in and docs/configuration.md lists settings in.
 * `info` is the field name `GET /store/admin/info` shows the value under (none: not shown); `secret` values
 * may hold credentials and are never shown; `live` settings apply on reload, the others need a restart.
 */
export const SETTINGS = {
  SVC_PORT: { path: 'port', schema: port(8080), info: 'port', description: 'data API listener port' },
  SVC_HOST: { path: 'host', schema: str('0.0.0.0'), info: 'host', description: 'data API listen address' },
  SVC_MAX_CONNECTIONS: {
    path: 'maxConnections',
    schema: int(10000, 1),
    info: 'max_connections',
    description: 'open HTTP connections at most',
  },
  SVC_MAX_CONNECTIONS_PER_IP: {
    path: 'maxConnectionsPerIp',
    schema: int(256, 0),
    info: 'max_connections_per_ip',
    description: 'open connections per client address and process (`0`: no cap); see guide.md (errors)',
  },
  SVC_IPV6_PREFIX_LENGTH: {
    path: 'ipv6PrefixLength',
    schema: int(64, 1, 128),
    info: 'ipv6_prefix_length',
    description:
      'IPv6 clients are grouped by this network prefix (one /64 is one client) for the connection cap and rate limits',
  },
  SVC_HEADERS_TIMEOUT_MS: {
    path: 'headersTimeoutMs',
    schema: int(10000, 1),
    info: 'headers_timeout_ms',
    description: 'request line and headers must arrive within this (`408`, connection closed)',
  },
  SVC_REQUEST_TIMEOUT_MS: {
    path: 'requestTimeoutMs',
    schema: int(60000, 0),
    info: 'request_timeout_ms',
    description: 'the whole request, body included, within this (`0`: none; >= headers timeout)',
  },
  SVC_KEEP_ALIVE_TIMEOUT_MS: {
    path: 'keepAliveTimeoutMs',
    schema: int(65000, 1),
    info: 'keep_alive_timeout_ms',
    description: 'an idle keep-alive connection is closed after this (above a 60 s LB idle)',
  },
  SVC_WORKERS: {
    path: 'workers',
    schema: int(1, 1, 64),
    description: 'processes sharing the port (node:cluster)',
  },
  SVC_SHUTDOWN_TIMEOUT_MS: {
    path: 'shutdownTimeoutMs',
    schema: int(10000, 0),
    description: 'how long SIGTERM waits for requests in flight',
  },
  // info shows the Redis settings as one redacted `database_url` (observability/info.ts).
  SVC_REDIS_URL: {
    path: 'redis.url',
    schema: str('redis://127.0.0.1:6379', { pattern: '^rediss?://' }),
    secret: true,
    description:
      'standalone Redis (user/password in the URL); `rediss://` turns TLS on, for Sentinel and Cluster too (their URL gives scheme and credentials only)',
  },
  SVC_REDIS_SENTINELS: {
    path: 'redis.sentinels',
    schema: str(undefined, HOST_PORTS),
    parse: hostPorts,
    description: '`host:port,host:port` of Sentinels',
  },
  SVC_REDIS_SENTINEL_NAME: {
    path: 'redis.sentinelName',
    schema: str('mymaster'),
    description: 'the master name the Sentinels know',
  },
  SVC_REDIS_CLUSTER_NODES: {
    path: 'redis.clusterNodes',
    schema: str(undefined, HOST_PORTS),
    parse: hostPorts,
    description: '`host:port,...` seed nodes of a Redis Cluster',
  },
  // TLS is on with a rediss:// SVC_REDIS_URL, for every topology (docs/operations.md, "TLS to Redis").
  SVC_REDIS_TLS_CA_FILE: {
    path: 'redis.tls.caFile',
    schema: str(),
    description:
      "PEM file of the CA(s) that sign the Redis servers' certificates, in place of the system's roots (`rediss://` only)",
  },
  SVC_REDIS_TLS_CERT_FILE: {
    path: 'redis.tls.certFile',
    schema: str(),
    description:
      'PEM client certificate shown to Redis (mutual TLS, `--tls-auth-clients yes`); with the key file',
  },
  SVC_REDIS_TLS_KEY_FILE: {
    path: 'redis.tls.keyFile',
    schema: str(),
    description: 'PEM private key of that client certificate',
  },
  SVC_REDIS_TLS_SERVER_NAME: {
    path: 'redis.tls.serverName',
    schema: str(undefined, { pattern: '^[A-Za-z0-9.-]+$', maxLength: 253 }),
    description:
      'the name every Redis certificate must hold, also sent as SNI (default: the host connected to: Sentinels, data nodes, Cluster nodes)',
  },
  SVC_REDIS_COMMAND_TIMEOUT_MS: {
    path: 'redis.commandTimeoutMs',
    schema: int(1000, 1),
    description: 'a command not answered in time is a 503',
  },
  SVC_REDIS_CONNECT_TIMEOUT_MS: {
    path: 'redis.connectTimeoutMs',
    schema: int(2000, 1),
    description: 'connection attempt timeout',
  },
  SVC_REDIS_WAIT_REPLICAS: {
    path: 'redis.waitReplicas',
    schema: int(0, 0, 64),
    description:
      'replicas that must confirm a write (`WAIT`) before it is acknowledged (`0`: the primary alone)',
  },
  SVC_REDIS_MAX_ARGUMENTS: {
    path: 'redis.maxArguments',
    schema: int(0, 0),
    description:
      'most words in one Redis command, its name included (`0`: no cap; ElastiCache Serverless: `3999`); longer: `400`',
  },
  SVC_REDIS_WAIT_TIMEOUT_MS: {
    path: 'redis.waitTimeoutMs',
    schema: int(1000, 1),
    description: 'how long a write waits for those replicas',
  },
  SVC_KEY_PREFIX: {
    path: 'keyPrefix',
    schema: str('', { pattern: '^[A-Za-z0-9_.:{}-]*$', maxLength: 256 }),
    info: 'key_prefix',
    description: 'puts every user key under this prefix in Redis',
  },
  SVC_MAX_VALUE_BYTES: {
    path: 'limits.maxValueBytes',
    schema: int(1048576, 1),
    info: 'max_value_bytes',
    description: 'largest string or hash value',
  },
  SVC_MAX_BODY_BYTES: {
    path: 'limits.maxBodyBytes',
    schema: int(10485760, 1),
    info: 'max_body_bytes',
    description: 'largest request body (413 above)',
  },
  SVC_BATCH_MAX_OPERATIONS: {
    path: 'limits.batchMaxOperations',
    schema: int(1000, 1, 100000),
    info: 'batch_max_operations',
    description: 'most operations in one batch',
  },
  SVC_MAX_REPLY_ELEMENTS: {
    path: 'limits.maxReplyElements',
    schema: int(100000, 1000),
    info: 'max_reply_elements',
    description: 'most elements one request reads from Redis (batches, set algebra; `413 reply_too_large`)',
  },
  SVC_MAX_REPLY_BYTES: {
    path: 'limits.maxReplyBytes',
    schema: int(16777216, 1024),
    info: 'max_reply_bytes',
    description:
      'most bytes of values one request reads from Redis, checked before reading (`413 reply_too_large`)',
  },
  SVC_LIST_MAX_WAIT: {
    path: 'limits.listMaxWait',
    schema: int(30, 1, 300),
    info: 'list_max_wait',
    description: 'longest `wait` (seconds) of a list pop',
  },
  SVC_LIST_MAX_WAITERS: {
    path: 'listMaxWaiters',
    schema: int(16, 0, 10000),
    info: 'list_max_waiters',
    description: 'list pops waiting at once, each on its own Redis connection (`503` beyond)',
  },
  SVC_IDEMPOTENCY_TTL_SECONDS: {
    path: 'idempotencyTtlSeconds',
    schema: int(86400, 1),
    info: 'idempotency_ttl_seconds',
    description: 'how long the outcome of a write is kept for retries with the same `Idempotency-Key`',
  },
  SVC_LIST_MAX_WAITERS_PER_CLIENT: {
    path: 'listMaxWaitersPerClient',
    schema: int(4, 1, 10000),
    info: 'list_max_waiters_per_client',
    description:
      'waiting list pops one credential (or, without one, one client address) holds at once (`429` beyond)',
  },
  SVC_QUEUE_MAX_WAIT: {
    path: 'queueMaxWait',
    schema: int(20, 1, 300),
    info: 'queue_max_wait',
    description:
      'longest `wait` (seconds) of a queue receive (long poll); waiting receives count against `SVC_LIST_MAX_WAITERS_PER_CLIENT`',
  },
  SVC_ADMIN_ENABLED: {
    path: 'admin.enabled',
    schema: bool(true),
    info: 'admin_enabled',
    description: 'serve `/store/admin/*`',
  },
  SVC_ADMIN_HOST: {
    path: 'admin.host',
    schema: str('0.0.0.0'),
    info: 'admin_host',
    description: 'admin listen address (used when the admin port differs from `SVC_PORT`)',
  },
  // Unset: the data port, so that SVC_PORT alone moves the whole service.
  SVC_ADMIN_PORT: {
    path: 'admin.port',
    schema: derivedPort(),
    defaultFrom: 'SVC_PORT',
    info: 'admin_port',
    description: 'admin listener port; its own listener when it differs from `SVC_PORT`',
  },
  SVC_RATE_LIMIT_ENABLED: {
    path: 'rateLimit.enabled',
    schema: bool(true),
    live: true,
    info: 'rate_limit_enabled',
    description: 'per-IP rate limits',
  },
  SVC_RATE_LIMIT_REQUESTS: {
    path: 'rateLimit.requests',
    schema: int(100, 1),
    live: true,
    info: 'rate_limit_requests',
    description: 'data endpoints: requests per window',
  },
  SVC_RATE_LIMIT_WINDOW: {
    path: 'rateLimit.windowSeconds',
    schema: int(60, 1),
    live: true,
    info: 'rate_limit_window',
    description: 'data endpoints: window in seconds',
  },
  SVC_ADMIN_RATE_LIMIT_REQUESTS: {
    path: 'rateLimit.adminRequests',
    schema: int(1000, 1),
    live: true,
    info: 'admin_rate_limit_requests',
    description: 'admin endpoints: requests per window',
  },
  SVC_ADMIN_RATE_LIMIT_WINDOW: {
    path: 'rateLimit.adminWindowSeconds',
    schema: int(60, 1),
    live: true,
    info: 'admin_rate_limit_window',
    description: 'admin endpoints: window in seconds',
  },
  SVC_TRUST_PROXY: {
    path: 'trustProxy',
    schema: str('false'),
    parse: parseTrustProxy,
    description: 'Express `trust proxy`: `true`, a hop count, or addresses/subnets',
  },
  SVC_PROTECTED_MODE: {
    path: 'auth.protectedMode',
    schema: bool(true),
    live: true,
    info: 'protected_mode',
    description: 'with no credentials configured, answer loopback clients only',
  },
  SVC_CORS_ORIGINS: {
    path: 'corsOrigins',
    schema: str('', { pattern: '^(\\*|(https?://[^,/\\s]+)(,https?://[^,/\\s]+)*)?$', maxLength: 8192 }),
    parse: parseOrigins,
    live: true,
    info: 'cors_origins',
    description:
      'browser origins allowed to call the API (CORS), comma-separated `scheme://host[:port]`, or `*`; any other `Origin` is refused (`403`)',
  },
  SVC_API_KEYS: {
    path: 'auth.apiKeys',
    schema: str(),
    live: true,
    secret: true,
    description: 'API keys and Basic users, inline JSON; see operations.md',
  },
  SVC_API_KEYS_FILE: {
    path: 'auth.apiKeysFile',
    schema: str(),
    live: true,
    description: 'API keys and Basic users, from this file; see operations.md',
  },
  SVC_JWT_SECRET: {
    path: 'auth.jwtSecret',
    schema: str(undefined, { minLength: 32 }),
    live: true,
    secret: true,
    description: 'HS256 secret for JWTs (32+ characters); exclusive with the public key',
  },
  SVC_JWT_PUBLIC_KEY_FILE: {
    path: 'auth.jwtPublicKeyFile',
    schema: str(),
    live: true,
    description: 'RS256/ES256 public key for JWTs (PEM or JWK)',
  },
  SVC_JWT_ISSUER: { path: 'auth.jwtIssuer', schema: str(), live: true, description: 'required `iss` claim' },
  SVC_JWT_AUDIENCE: {
    path: 'auth.jwtAudience',
    schema: str(),
    live: true,
    description: 'required `aud` claim',
  },
  SVC_METRICS_ENABLED: {
    path: 'metricsEnabled',
    schema: bool(true),
    live: true,
    info: 'metrics_enabled',
    description: 'serve `/store/admin/metrics`',
  },
  SVC_CONSOLE_ENABLED: {
    path: 'consoleEnabled',
    schema: bool(true),
    info: 'console_enabled',
    description: 'serve the web console at `/console` (built by `npm run build`; see docs/console.md)',
  },
  SVC_LOG_LEVEL: {
    path: 'log.level',
    schema: oneOf(['debug', 'info', 'warn', 'error'], 'info'),
    live: true,
    info: 'log_level',
    description: '`debug`, `info`, `warn`, `error`',
  },
  SVC_LOG_FORMAT: {
    path: 'log.format',
    schema: oneOf(['json', 'text'], 'text'),
    live: true,
    info: 'log_format',
    description: '`text` or `json`',
  },
  SVC_ERROR_DETAILS: {
    path: 'errorDetails',
    schema: bool(true),
    live: true,
    info: 'error_details',
    description: 'include `details` in error bodies',
  },
  SVC_REQUEST_ID_HEADER: {
    path: 'requestIdHeader',
    schema: str('X-Request-ID', { pattern: '^[A-Za-z0-9-]{1,64}$' }),
    description: 'request id header name',
  },
  SVC_UPSTASH_ENABLED: {
    path: 'upstash.enabled',
    schema: bool(true),
    info: 'upstash_enabled',
    description: 'the Upstash-compatible command endpoint at `/upstash` (docs/upstash.md)',
  },
  SVC_UPSTASH_SCRIPT_PERMISSION: {
    path: 'upstash.scriptPermission',
    schema: oneOf(['admin', 'write'], 'admin'),
    info: 'upstash_script_permission',
    live: true,
    description:
      'permission that EVAL / FCALL need at `/upstash` (`write` for @upstash/ratelimit; see docs/upstash.md for the risk)',
  },
  SVC_CHANGES_ENABLED: {
    path: 'changes.enabled',
    schema: bool(false),
    info: 'changes_enabled',
    description:
      'the change feed: every write appends an event to a Redis Stream (`/store/changes`; on Cluster one per master)',
  },
  SVC_CHANGES_MAXLEN: {
    path: 'changes.maxlen',
    schema: int(100000, 1),
    info: 'changes_maxlen',
    description: 'events the feed keeps (approximate trim); an older resume point is a `reset`',
  },
  SVC_CHANGES_MAX_SUBSCRIBERS: {
    path: 'changes.maxSubscribers',
    schema: int(1000, 1),
    info: 'changes_max_subscribers',
    description: 'SSE, WebSocket and long-poll subscribers per process at once (`503` beyond)',
  },
  SVC_CHANGES_MAX_SUBSCRIBERS_PER_CLIENT: {
    path: 'changes.maxSubscribersPerClient',
    schema: int(100, 1),
    info: 'changes_max_subscribers_per_client',
    description:
      'subscribers one credential (or, without one, one client address) holds at once (`429` beyond)',
  },
  SVC_CHANGES_BUFFER: {
    path: 'changes.buffer',
    schema: int(1000, 1),
    info: 'changes_buffer',
    description: 'events queued for a slow subscriber before it is dropped (it resumes by id)',
  },
  SVC_CHANGES_EXPIRED: {
    path: 'changes.expired',
    schema: bool(false),
    info: 'changes_expired',
    description:
      'also report keys Redis expires or evicts (keyspace notifications, best effort; needs `notify-keyspace-events Exe`); not on Cluster',
  },
  SVC_CHANGES_HEARTBEAT_MS: {
    path: 'changes.heartbeatMs',
    schema: int(15000, 100),
    info: 'changes_heartbeat_ms',
    description: 'SSE heartbeat comment / WebSocket ping interval',
  },
  SVC_CLIENTS_MAX: {
    path: 'clientsMax',
    schema: int(1000, 1),
    description: 'HTTP clients remembered for `/store/admin/clients`',
  },
  SVC_CONFIG_FILE: {
    path: 'configFile',
    schema: str(),
    description: 'JSON or YAML file of the settings above',
  },
} as const satisfies Record<string, Setting>;

export type SettingName = keyof typeof SETTINGS;

/** The table as [name, setting] pairs, in declaration order, for the code that walks every setting. */
export const SETTING_LIST = Object.entries(SETTINGS) as [SettingName, Setting][];
