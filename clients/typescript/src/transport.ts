// The typed openapi-fetch client with retries, per-call headers, and answers unwrapped into data or a GatewayError.
import createClient, { type Client } from 'openapi-fetch';
import { GatewayError } from './errors.js';
import { type RetryOptions, retryingFetch } from './retry.js';
import type { paths } from './schema.js';

export type Api = Client<paths>;

export interface GatewayOptions {
  /** Where the service is, e.g. `http://127.0.0.1:8080` (in a browser, `location.origin` or '' for the same origin). */
  baseUrl: string;
  /** An API key or a JWT, sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Another fetch (a test's, a proxy's); the global one by default. */
  fetch?: typeof fetch;
  /** Retries of reads (and of writes that carry an Idempotency-Key) on 429, 503 and network failures. */
  retry?: RetryOptions;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

/** Options of one call. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** Options of one write. */
export interface WriteOptions extends CallOptions {
  /** Apply only if the key's ETag is this one (else a GatewayError `precondition_failed`, status 412). */
  ifMatch?: string;
  /** `'*'`: create only (else a GatewayError `key_exists` / `field_exists` / `duplicate_member`, status 409). */
  ifNoneMatch?: '*';
  /** Sent as `Idempotency-Key`: the write may then be retried on 429 / 503 / network failures. */
  idempotencyKey?: string;
  /** `'idempotent'`: send a fresh Idempotency-Key (unless one is given) so that the write is retried too. */
  retry?: 'idempotent';
}

export function createApi(options: GatewayOptions): Api {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.Authorization = `Bearer ${options.token}`;
  // Looked up at call time: a page or test may replace globalThis.fetch after the client was made.
  const fetchFn =
    options.fetch ?? ((input: Request | string | URL, init?: RequestInit) => fetch(input, init));
  return createClient<paths>({
    baseUrl: options.baseUrl,
    headers,
    fetch: retryingFetch(fetchFn, options.retry),
  });
}

/** The request headers of a write's options. */
export function writeHeaders(options: WriteOptions = {}): Record<string, string> {
  const headers: Record<string, string> = {};
  if (options.ifMatch !== undefined) headers['If-Match'] = options.ifMatch;
  if (options.ifNoneMatch !== undefined) headers['If-None-Match'] = options.ifNoneMatch;
  const key = options.idempotencyKey ?? (options.retry === 'idempotent' ? crypto.randomUUID() : undefined);
  if (key !== undefined) headers['Idempotency-Key'] = key;
  return headers;
}

interface Outcome<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** A successful answer: its body, status and ETag. */
export interface Answer<T> {
  data: T;
  status: number;
  etag: string | undefined;
}

/** The answer's data, or a GatewayError carrying its error body. */
export async function unwrap<T>(call: Promise<Outcome<T>>): Promise<Answer<T>> {
  const { data, error, response } = await call;
  if (!response.ok) throw GatewayError.fromResponse(response, error);
  return { data: data as T, status: response.status, etag: response.headers.get('ETag') ?? undefined };
}

/** The same, or `null` when the service answered 404 `not_found` (a missing key). */
export async function unwrapOrNull<T>(call: Promise<Outcome<T>>, missing = ['not_found']) {
  try {
    return await unwrap(call);
  } catch (err) {
    if (err instanceof GatewayError && missing.includes(err.error)) return null;
    throw err;
  }
}
