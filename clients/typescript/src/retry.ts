// A fetch that retries 429 and 503 answers (and network failures) of requests that are safe to repeat.
import { GatewayError } from './errors.js';

export interface RetryOptions {
  /** Attempts after the first (default 3); 0 turns retries off. */
  retries?: number;
  /** The first backoff, doubled on each attempt, with jitter (default 100 ms). */
  baseDelayMs?: number;
  /** No wait longer than this, whatever Retry-After says (default 10 s). */
  maxDelayMs?: number;
}

const RETRIED = new Set([429, 503]);

/**
 * A read (GET, HEAD) can always be sent again; a write only when it carries an Idempotency-Key, which lets the
 * service answer a repeated write with the first one's answer instead of applying it twice.
 */
export function repeatable(request: Request): boolean {
  return request.method === 'GET' || request.method === 'HEAD' || request.headers.has('Idempotency-Key');
}

/** How long to wait before attempt `attempt` (1-based): Retry-After when the answer gave one, else backoff. */
export function delayFor(attempt: number, response: Response | undefined, options: Required<RetryOptions>) {
  const header = response?.headers.get('Retry-After');
  const seconds = header === null || header === undefined ? Number.NaN : Number(header);
  const backoff = options.baseDelayMs * 2 ** (attempt - 1) * (0.5 + Math.random() / 2);
  const wanted = Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : backoff;
  return Math.min(wanted, options.maxDelayMs);
}

export function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Wraps `fetch`: the request is cloned before each attempt, so that its body can be sent again. */
export function retryingFetch(fetchFn: typeof fetch, options: RetryOptions = {}) {
  const opts: Required<RetryOptions> = { retries: 3, baseDelayMs: 100, maxDelayMs: 10_000, ...options };
  return async (request: Request): Promise<Response> => {
    const again = repeatable(request) ? opts.retries : 0;
    for (let attempt = 0; ; attempt++) {
      const sent = attempt < again ? request.clone() : request;
      let response: Response;
      try {
        response = await fetchFn(sent);
      } catch (cause) {
        if (request.signal.aborted) throw cause;
        if (attempt >= again)
          throw new GatewayError({
            error: 'network_error',
            message: `${request.method} ${request.url}: ${(cause as Error).message}`,
            status: 0,
            cause,
          });
        await sleep(delayFor(attempt + 1, undefined, opts), request.signal);
        continue;
      }
      if (attempt >= again || !RETRIED.has(response.status)) return response;
      // The body is not needed: free the connection before waiting.
      await response.body?.cancel().catch(() => {});
      await sleep(delayFor(attempt + 1, response, opts), request.signal);
    }
  };
}
