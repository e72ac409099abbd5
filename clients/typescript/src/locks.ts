// client.locks: named locks with owner and fencing tokens; withLock runs a function while holding one.
import { GatewayError } from './errors.js';
import type { components } from './schema.js';
import { type Api, type CallOptions, unwrap } from './transport.js';

export type LockGrant = components['schemas']['LockGrant'];
export type LockStatus = components['schemas']['LockStatus'];
export interface HeldLock {
  name: string;
  fence: number;
  ttl_ms: number;
}

export interface AcquireOptions extends CallOptions {
  /** How long the lock lasts unless renewed (default 10 s). */
  ttlMs?: number;
  /** How long to wait for a held lock (long poll, up to 60 s); 0 (default): a held lock fails at once. */
  waitMs?: number;
}

export interface WithLockOptions extends AcquireOptions {
  /** How often the lock is renewed while `fn` runs (default a third of the TTL). */
  renewEveryMs?: number;
}

const at = (name: string) => ({ params: { path: { name } } });
const JSON_HEADERS = { 'Content-Type': 'application/json' };

export function locks(api: Api) {
  const acquire = async (name: string, options: AcquireOptions = {}): Promise<LockGrant> => {
    const { ttlMs = 10_000, waitMs = 0, signal } = options;
    const body = { ttl_ms: ttlMs, ...(waitMs > 0 ? { wait_ms: waitMs } : {}) };
    return (
      await unwrap(
        api.POST('/store/locks/{name}/acquire', { ...at(name), body, headers: JSON_HEADERS, signal }),
      )
    ).data;
  };
  const renew = async (name: string, token: string, ttlMs: number, options: CallOptions = {}) =>
    (
      await unwrap(
        api.POST('/store/locks/{name}/renew', {
          ...at(name),
          body: { token, ttl_ms: ttlMs },
          headers: JSON_HEADERS,
          signal: options.signal,
        }),
      )
    ).data;
  const release = async (name: string, token: string, options: CallOptions = {}): Promise<void> => {
    await unwrap(
      api.POST('/store/locks/{name}/release', {
        ...at(name),
        body: { token },
        headers: JSON_HEADERS,
        signal: options.signal,
      }),
    );
  };
  return {
    /** Takes the lock: its owner token, fencing token and expiry; GatewayError `lock_held` when someone holds it. */
    acquire,
    /** Extends the lock's TTL; GatewayError `lock_lost` when the token no longer holds it. */
    renew,
    /** Gives the lock back; GatewayError `lock_lost` when the token no longer held it. */
    release,
    /** The locks held now whose name starts with `prefix` (at most `limit`), with their fencing tokens and TTL left. */
    async list(options: CallOptions & { prefix?: string; limit?: number } = {}) {
      const { prefix, limit, signal } = options;
      const { data } = await unwrap(
        api.GET('/store/locks', { params: { query: { prefix, limit } }, signal }),
      );
      return data as { locks: HeldLock[]; complete: boolean };
    },
    /** Who holds the lock (its fencing token and TTL left), without the owner token. */
    async status(name: string, options: CallOptions = {}): Promise<LockStatus> {
      return (await unwrap(api.GET('/store/locks/{name}', { ...at(name), signal: options.signal }))).data;
    },
    /**
     * Runs `fn` while holding the lock: acquires it (waiting `waitMs`), renews it every `renewEveryMs` while `fn`
     * runs, and releases it when `fn` ends. When a renewal finds the lock lost (or cannot reach the service before
     * the lock would have expired), the signal given to `fn` is aborted and withLock rejects with that error even if
     * `fn` resolves: what `fn` did after that was not protected. Pass `lock.fence` to the resource you write to.
     */
    async withLock<T>(
      name: string,
      fn: (signal: AbortSignal, lock: LockGrant) => Promise<T> | T,
      options: WithLockOptions = {},
    ): Promise<T> {
      const ttlMs = options.ttlMs ?? 10_000;
      const every = options.renewEveryMs ?? Math.max(1, Math.floor(ttlMs / 3));
      const lock = await acquire(name, { ...options, ttlMs });
      const controller = new AbortController();
      let lost: unknown;
      let expires = Date.now() + ttlMs;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let done = false;
      const schedule = () => {
        timer = setTimeout(async () => {
          const sent = Date.now();
          try {
            await renew(name, lock.token, ttlMs);
            expires = sent + ttlMs;
          } catch (err) {
            const gone = err instanceof GatewayError && err.error === 'lock_lost';
            if (gone || Date.now() >= expires) {
              lost = err;
              controller.abort(err);
              return;
            }
          }
          if (!done) schedule();
        }, every);
      };
      schedule();
      try {
        const result = await fn(controller.signal, lock);
        if (lost !== undefined) throw lost;
        return result;
      } finally {
        done = true;
        clearTimeout(timer);
        if (lost === undefined) await release(name, lock.token).catch(() => {});
      }
    },
  };
}
