// Named locks and semaphores with owner and fencing tokens: acquire (waiting without polling Redis), renew,
// release, status.
import { randomBytes } from 'node:crypto';
import { ApiError, REDIS_RETRY_AFTER, toApiError } from '../errors';
import type { Metrics } from '../observability/metrics';
import type { Store } from '../redis/store';
import { type Attempt, type Kind, lockKind, semaphoreKind } from './kinds';
import { Wakeups } from './wakeups';

/** Acquires waiting at once in one process, and per client (a credential, else an address): 503 / 429 beyond. */
export const MAX_WAITING = 10_000;
export const MAX_WAITING_PER_CLIENT = 100;

export type KindName = 'lock' | 'semaphore';

export interface Grant {
  name: string;
  /** The owner token: renew and release need it. */
  token: string;
  /** The fencing token: larger than every one handed out before for this name. */
  fence: number;
  ttl_ms: number;
  expires_at: string;
}

export interface Holder {
  name: string;
  held: boolean;
  fence: number | null;
  ttl_ms: number | null;
  expires_at: string | null;
}

const expiresAt = (ms: number) => new Date(Date.now() + ms).toISOString();
const fenceOf = (token: string) => Number(token.slice(0, token.indexOf('.')));

function lost(kind: Kind, name: string): ApiError {
  return new ApiError(
    'lock_lost',
    `The ${kind.noun} '${name}' is no longer held with this token: it expired or was released, and may be held by another owner now (stop using the resource it protects)`,
  );
}

export class Locks {
  readonly wakeups: Wakeups;
  private readonly kinds: Record<KindName, Kind> = { lock: lockKind(), semaphore: semaphoreKind() };
  private waiting = 0;
  private readonly perClient = new Map<string, number>();

  /** `store` is read when first needed: the app builds it in the same context as this. */
  constructor(
    private readonly storeOf: () => Store,
    private readonly metricsOf?: () => Metrics,
  ) {
    this.wakeups = new Wakeups(() => storeOf().redis);
  }

  private get store(): Store {
    return this.storeOf();
  }

  /** Acquires waiting now in this process. */
  get waiters(): number {
    return this.waiting;
  }

  /**
   * Takes the lock (or one of a semaphore's `limit` places), waiting up to `waitMs` for it: the first attempt,
   * then one more per release message on its channel and one when a holder's TTL runs out; 409 lock_held when the
   * wait ends first.
   */
  acquire(
    kindName: KindName,
    name: string,
    { ttlMs, waitMs, limit = 1 }: { ttlMs: number; waitMs: number; limit?: number },
    signal: AbortSignal,
    client: string,
  ): Promise<Grant> {
    const kind = this.kinds[kindName];
    return this.counted('acquire', this.take(kind, name, ttlMs, waitMs, limit, signal, client));
  }

  private async take(
    kind: Kind,
    name: string,
    ttlMs: number,
    waitMs: number,
    limit: number,
    signal: AbortSignal,
    client: string,
  ): Promise<Grant> {
    const attempt = async (): Promise<[Attempt, string]> => {
      const secret = randomBytes(12).toString('base64url');
      return [await kind.attempt(this.store, name, secret, ttlMs, limit), secret];
    };
    if (waitMs === 0) return this.granted(kind, name, ttlMs, limit, await attempt());
    const { key } = kind.keys(this.store, name);
    this.enter(client);
    try {
      await this.wakeups.join(key).catch((err: unknown) => {
        throw toApiError(err);
      });
      const deadline = Date.now() + waitMs;
      for (;;) {
        const since = this.wakeups.generation(key);
        const reply = await attempt();
        if (reply[0][0] === 1 || Date.now() >= deadline || signal.aborted) {
          const grant = this.granted(kind, name, ttlMs, limit, reply);
          // Taken for a client that left meanwhile: give it back rather than hold it for the TTL.
          if (signal.aborted) await kind.release(this.store, name, grant.token).catch(() => {});
          return grant;
        }
        // Woken by a release, else when a holder's TTL would run out (it may have died holding it).
        const left = deadline - Date.now();
        const holderLeft = (reply[0][2] ?? -1) >= 0 ? (reply[0][2] as number) + 1 : left;
        await this.wakeups.sleep(key, since, Math.min(left, holderLeft), signal);
      }
    } finally {
      this.wakeups.leave(key);
      this.exit(client);
    }
  }

  renew(kindName: KindName, name: string, token: string, ttlMs: number): Promise<Grant> {
    const kind = this.kinds[kindName];
    return this.counted(
      'renew',
      kind.renew(this.store, name, token, ttlMs).then((renewed) => {
        if (renewed !== 1) throw lost(kind, name);
        return { name, token, fence: fenceOf(token), ttl_ms: ttlMs, expires_at: expiresAt(ttlMs) };
      }),
    );
  }

  release(kindName: KindName, name: string, token: string): Promise<void> {
    const kind = this.kinds[kindName];
    return this.counted(
      'release',
      kind.release(this.store, name, token).then((released) => {
        if (released !== 1) throw lost(kind, name);
      }),
    );
  }

  async status(name: string): Promise<Holder> {
    const reply = await this.kinds.lock.status(this.store, name);
    if (!reply) return { name, held: false, fence: null, ttl_ms: null, expires_at: null };
    const [fence, ttl] = reply as [number, number];
    return { name, held: true, fence, ttl_ms: ttl, expires_at: expiresAt(ttl) };
  }

  /** A semaphore's holders now, the largest fencing token among them and when the first one's TTL runs out. */
  async semaphoreStatus(name: string) {
    const [holders = 0, fence, ttl] = (await this.kinds.semaphore.status(this.store, name)) ?? [];
    if (holders === 0) return { name, holders: 0, fence: null, next_expiry_ms: null };
    return { name, holders, fence: fence as number, next_expiry_ms: ttl as number };
  }

  close(): void {
    this.wakeups.close();
  }

  /** `work`'s outcome in svc_locks_operations_total. */
  private async counted<T>(operation: 'acquire' | 'renew' | 'release', work: Promise<T>): Promise<T> {
    const metrics = this.metricsOf?.();
    try {
      const value = await work;
      metrics?.lockOperation(operation, 'ok');
      return value;
    } catch (err) {
      const type = err instanceof ApiError ? err.type : '';
      metrics?.lockOperation(
        operation,
        type === 'lock_held' ? 'held' : type === 'lock_lost' ? 'lost' : 'error',
      );
      throw err;
    }
  }

  private granted(
    kind: Kind,
    name: string,
    ttlMs: number,
    limit: number,
    [reply, secret]: [Attempt, string],
  ): Grant {
    const [taken, fence, leftMs = 0] = reply;
    if (taken === 1)
      return { name, token: `${fence}.${secret}`, fence, ttl_ms: ttlMs, expires_at: expiresAt(ttlMs) };
    const retryAfter = Math.max(1, Math.ceil(leftMs / 1000));
    if (kind.noun === 'semaphore')
      throw new ApiError(
        'lock_held',
        `All ${limit} places of the semaphore '${name}' are held (${fence} holders); the first ends in up to ${leftMs} ms`,
        {
          details: { holders: fence, ttl_ms: leftMs },
          retryAfter,
        },
      );
    throw new ApiError(
      'lock_held',
      `The lock '${name}' is held (fencing token ${fence}) for up to ${leftMs} ms more`,
      {
        details: { fence, ttl_ms: leftMs },
        retryAfter,
      },
    );
  }

  private enter(client: string): void {
    if (this.waiting >= MAX_WAITING)
      throw new ApiError(
        'service_unavailable',
        `${MAX_WAITING} lock acquires already wait in this process; retry shortly`,
        {
          retryAfter: REDIS_RETRY_AFTER,
        },
      );
    const held = this.perClient.get(client) ?? 0;
    if (held >= MAX_WAITING_PER_CLIENT)
      throw new ApiError(
        'rate_limit_exceeded',
        `This client already has ${MAX_WAITING_PER_CLIENT} lock acquires waiting; retry when one has answered`,
        { retryAfter: REDIS_RETRY_AFTER },
      );
    this.waiting++;
    this.perClient.set(client, held + 1);
    this.metricsOf?.().lockWaiters(1);
  }

  private exit(client: string): void {
    this.waiting--;
    this.metricsOf?.().lockWaiters(-1);
    const left = (this.perClient.get(client) ?? 1) - 1;
    if (left > 0) this.perClient.set(client, left);
    else this.perClient.delete(client);
  }
}
