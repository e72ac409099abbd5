// Read-modify-write with If-Match: a change made in between is seen (412) and the function runs again on it.
import { GatewayError } from './errors.js';

export interface UpdateOptions {
  /** Reads and writes at most this many times (default 10) before the 412 is thrown. */
  attempts?: number;
  signal?: AbortSignal;
}

/**
 * `read` answers the current value and its ETag (null: no key); `write` stores the next value under If-Match
 * (If-None-Match: * when there was no key). Runs until a write applies, at most `attempts` times.
 */
export async function readModifyWrite<V, R>(
  read: () => Promise<{ value: V; etag: string | undefined } | null>,
  write: (next: V, condition: { ifMatch?: string; ifNoneMatch?: '*' }) => Promise<R>,
  fn: (current: V | null) => V | Promise<V>,
  { attempts = 10 }: UpdateOptions = {},
): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    const current = await read();
    const next = await fn(current?.value ?? null);
    const condition: { ifMatch?: string; ifNoneMatch?: '*' } =
      current === null ? { ifNoneMatch: '*' } : { ifMatch: current.etag ?? '*' };
    try {
      return await write(next, condition);
    } catch (err) {
      // 412: changed since it was read; 409 key_exists / field_exists: created since it was read.
      const raced =
        err instanceof GatewayError &&
        (err.error === 'precondition_failed' || err.error === 'key_exists' || err.error === 'field_exists');
      if (!raced || attempt >= attempts) throw err;
    }
  }
}
