// The error model: one table from error type to HTTP status, ApiError, and toApiError(unknown).

export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_key: 400,
  invalid_value: 400,
  invalid_ttl: 400,
  invalid_field: 400,
  invalid_member: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  field_not_found: 404,
  member_not_found: 404,
  index_not_found: 404,
  unknown_endpoint: 404,
  method_not_allowed: 405,
  key_exists: 409,
  field_exists: 409,
  duplicate_member: 409,
  idempotency_key_in_use: 409,
  wrong_type: 409,
  lock_held: 409,
  lock_lost: 409,
  request_timeout: 408,
  changes_reset: 410,
  precondition_failed: 412,
  payload_too_large: 413,
  reply_too_large: 413,
  unsupported_media_type: 415,
  not_a_number: 422,
  idempotency_key_mismatch: 422,
  binary_value: 422,
  headers_too_large: 431,
  rate_limit_exceeded: 429,
  server_error: 500,
  command_refused: 501,
  service_unavailable: 503,
} as const;

export type ErrorType = keyof typeof ERROR_STATUS;

export interface ApiErrorOptions {
  details?: Record<string, unknown>;
  retryAfter?: number;
  headers?: Record<string, string>;
  cause?: unknown;
}

export class ApiError extends Error {
  readonly status: number;
  readonly details?: Record<string, unknown>;
  readonly retryAfter?: number;
  readonly headers?: Record<string, string>;

  constructor(
    readonly type: ErrorType,
    message: string,
    options: ApiErrorOptions = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'ApiError';
    this.status = ERROR_STATUS[type];
    this.details = options.details;
    this.retryAfter = options.retryAfter;
    this.headers = options.headers;
  }
}

/** Seconds a client should wait before retrying while Redis is unreachable. */
export const REDIS_RETRY_AFTER = 1;

/** A missing key: every family's 404, and admin's memory record. */
export function notFound(key: string): ApiError {
  return new ApiError('not_found', `Key '${key}' does not exist`);
}

// ioredis reports a lost or slow connection with these plain errors (no class to test against).
const CONNECTION_MESSAGES = [
  'Command timed out',
  "Stream isn't writeable",
  'Connection is closed',
  'Reached the max retries per request limit',
  'None of startup nodes is available',
  'Failed to refresh slots cache',
  'All sentinels are unreachable',
  'Socket timeout',
  // A Cluster that is failing over: slots move, nodes go away, the slot map is being refreshed.
  'Too many Cluster redirections',
  "Cluster isn't ready",
  'Cluster is disconnect',
  'Node is disconnected',
];
/**
 * Redis replies that mean "not now" rather than a bug: a demoted primary (READONLY), a replica syncing or a node
 * loading its data, a Cluster or Sentinel set failing over, a redirection (MOVED, ASK) ioredis could not follow.
 */
const UNAVAILABLE_REPLIES = [
  'LOADING',
  'MASTERDOWN',
  'CLUSTERDOWN',
  'TRYAGAIN',
  'BUSY',
  'READONLY',
  'OOM',
  'MOVED',
  'ASK',
  'NOREPLICAS',
];

/** Why a Redis error reply means its command is refused; undefined when the command ran (or failed on its input). */
export function refusalReason(err: unknown): string | undefined {
  const message = err instanceof Error ? err.message : String(err);
  if (/^ERR unknown (sub)?command|^ERR Unknown (Redis )?command called from script/i.test(message))
    return 'unknown command: renamed or disabled';
  if (message.startsWith('NOPERM')) return 'denied by ACL (NOPERM)';
  return undefined;
}

/**
 * A command the server refuses (renamed away, or denied by ACL, as managed Redis services do): a 501 that names it,
 * since retrying cannot help. Undefined for any other reply.
 */
export function commandRefused(err: Error, command?: string): ApiError | undefined {
  const { message } = err;
  const reason = refusalReason(err);
  if (!reason) return undefined;
  const name = command ?? /'([^']+)'/.exec(message)?.[1]?.replace('|', ' ').toUpperCase() ?? 'a command';
  return new ApiError(
    'command_refused',
    `The data store refuses ${name} (${reason}); this operation is not available on it`,
    {
      cause: err,
    },
  );
}

/** A field write with `ttl` on a server without hash-field expiry: a 501, and nothing was written. */
export const noFieldExpiry = (): ApiError =>
  new ApiError(
    'command_refused',
    'The data store refuses HEXPIRE: it has no hash-field expiry (Redis 8 and Valkey 9 have it; /store/admin/info says why), so a field cannot be given a ttl; nothing was written',
  );

function unavailable(cause: unknown): ApiError {
  return new ApiError('service_unavailable', 'The data store is unavailable; retry shortly', {
    retryAfter: REDIS_RETRY_AFTER,
    cause,
  });
}

/**
 * The parser's reason and position, from a JSON.parse message such as "Expected double-quoted property name in
 * JSON at position 14". V8 quotes the start of the text in some messages (`"xyz..." is not valid JSON`): that is
 * the client's data, kept out of the answer (and so out of logs).
 */
function malformedJson(err: { message: string; body?: unknown }): string {
  if (typeof err.body === 'string') {
    // body-parser's strict mode refuses well-formed JSON that is not an object or array, with no position.
    let value: unknown;
    try {
      value = JSON.parse(err.body);
    } catch {}
    if (value !== undefined)
      return `Request body must be a JSON object, not ${value === null ? 'null' : typeof value}`;
  }
  const position = /\bat position (\d+)/.exec(err.message)?.[1];
  const reason = err.message
    .replace(/ (?:in JSON )?at position \d+.*$/s, '')
    .replace(/, ".*" is not valid JSON$/s, '');
  return position === undefined
    ? `Malformed JSON: ${reason}`
    : `Malformed JSON at position ${position}: ${reason}`;
}

/** Body-parser errors carry a `type` such as 'entity.too.large'. */
function fromBodyParser(err: {
  type: string;
  limit?: number;
  message: string;
  body?: unknown;
}): ApiError | undefined {
  switch (err.type) {
    case 'entity.too.large':
      return new ApiError('payload_too_large', `Request body exceeds the limit of ${err.limit} bytes`);
    case 'entity.parse.failed': {
      // Well-formed JSON that is not an object is a malformed request (the contract's invalid_request), as an
      // array is; text that is not JSON at all is invalid_value.
      const message = malformedJson(err);
      return new ApiError(message.startsWith('Malformed') ? 'invalid_value' : 'invalid_request', message);
    }
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ApiError('unsupported_media_type', 'Request body must be UTF-8 encoded application/json');
    case 'request.aborted':
    case 'request.size.invalid':
      return new ApiError('invalid_request', 'Request body was incomplete');
    default:
      return undefined;
  }
}

/** Turns anything thrown while serving a request into an ApiError; unknown errors become server_error. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (!(err instanceof Error)) return new ApiError('server_error', 'Unexpected error', { cause: err });
  const typed = err as Error & { type?: unknown; code?: unknown };
  if (typeof typed.type === 'string') {
    const fromBody = fromBodyParser(typed as Error & { type: string });
    if (fromBody) return fromBody;
  }
  // Express and body-parser mark what the client got wrong (an undecodable path parameter, a body that does not
  // inflate with its Content-Encoding, ...) with a 4xx status.
  const status = (typed as { status?: unknown }).status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 413) return new ApiError('payload_too_large', 'Request body is too large');
    if (status === 415) return new ApiError('unsupported_media_type', `Unsupported request: ${err.message}`);
    return new ApiError('invalid_request', `Malformed request: ${err.message}`);
  }
  if (err.name === 'ReplyError') {
    const code = err.message.split(' ', 1)[0] ?? '';
    if (UNAVAILABLE_REPLIES.includes(code)) return unavailable(err);
    const refused = commandRefused(err);
    if (refused) return refused;
    return new ApiError('server_error', 'Unexpected reply from the data store', { cause: err });
  }
  if (
    err.name === 'MaxRetriesPerRequestError' ||
    err.name === 'ClusterAllFailedError' ||
    typed.code === 'ECONNREFUSED' ||
    CONNECTION_MESSAGES.some((m) => err.message.startsWith(m))
  ) {
    return unavailable(err);
  }
  return new ApiError('server_error', 'Unexpected error', { cause: err });
}
