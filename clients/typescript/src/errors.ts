// GatewayError: every failed call, carrying the service's JSON error body (or what stood in for one).
import type { components } from './schema.js';

/** The service's error body (schema `Error`). */
export type ErrorBody = components['schemas']['Error'];
/** The service's error types (`not_found`, `precondition_failed`, ...). */
export type ErrorType = components['schemas']['ErrorType'];

/** One class for every failure: an error answer of the service, or a network failure (`status` 0). */
export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  /** The error type (`not_found`, `wrong_type`, `precondition_failed`, ...); `network_error` when no answer came. */
  readonly error: ErrorType | 'network_error' | 'unexpected_response';
  readonly status: number;
  readonly requestId: string | undefined;
  /** Seconds to wait before retrying (429, 503). */
  readonly retryAfter: number | undefined;
  readonly details: Record<string, unknown> | undefined;
  /** The key's current ETag on a 412 (none when the key does not exist). */
  readonly etag: string | undefined;
  /** The body as the service sent it, when it was a JSON error. */
  readonly body: ErrorBody | undefined;

  constructor(init: {
    error: GatewayError['error'];
    message: string;
    status: number;
    requestId?: string;
    retryAfter?: number;
    details?: Record<string, unknown>;
    etag?: string;
    body?: ErrorBody;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.error = init.error;
    this.status = init.status;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
    this.details = init.details;
    this.etag = init.etag;
    this.body = init.body;
  }

  /** The error of an answer: its JSON error body when it has one, else a description of what came. */
  static fromResponse(response: Response, body: unknown): GatewayError {
    const etag = response.headers.get('ETag') ?? undefined;
    if (isErrorBody(body)) {
      return new GatewayError({
        error: body.error,
        message: body.message,
        status: body.status,
        requestId: body.request_id,
        retryAfter: body.retry_after,
        details: body.details as Record<string, unknown> | undefined,
        etag,
        body,
      });
    }
    const retry = Number(response.headers.get('Retry-After'));
    return new GatewayError({
      error: 'unexpected_response',
      message: `HTTP ${response.status} without a JSON error body`,
      status: response.status,
      requestId: response.headers.get('X-Request-ID') ?? undefined,
      retryAfter: Number.isFinite(retry) && retry >= 0 ? retry : undefined,
      etag,
    });
  }
}

function isErrorBody(body: unknown): body is ErrorBody {
  if (typeof body !== 'object' || body === null) return false;
  const b = body as Record<string, unknown>;
  return typeof b.error === 'string' && typeof b.message === 'string' && typeof b.status === 'number';
}
