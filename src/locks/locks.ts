// Named locks with owner and fencing tokens: acquire (waiting without polling Redis), renew, release, status.
import { randomBytes } from 'node:crypto';
import { sendInternal } from '../engine/send';
import { ApiError, REDIS_RETRY_AFTER, toApiError } from '../errors';
import type { Metrics } from '../observability/metrics';
import type { Store } from '../redis/store';
import { Wakeups } from './wakeups';

/** Acquires waiting at once in one process, and per client (a credential, else an address): 503 / 429 beyond. */
export const MAX_WAITING = 10_000;
export const MAX_WAITING_PER_CLIENT = 100;

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

/** How a server deletes a key only when it holds a value: a command of its own, else our script. */
type CompareAndDelete = 'DELEX' | 'DELIFEQ' | 'script';

const expiresAt = (ms: number) => new Date(Date.now() + ms).toISOString();
const fenceOf = (token: string) => Number(token.slice(0, token.indexOf('.')));

export function lockLost(name: string): ApiError {
  return new ApiError(
    'lock_lost',
    `The lock '${name}' is no longer held with this token: it expired or was released, and may be held by another owner now (stop using the resource it protects)`,
  );
}

export class Locks {
  readonly wakeups: Wakeups;
  private waiting = 0;
  private readonly perClient = new Map<string, number>();
  private compareAndDelete?: Promise<CompareAndDelete>;

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
   * Takes the lock, waiting up to `waitMs` for it: the first attempt, then one more per release message on its
   * channel and one when the holder's TTL runs out; 409 lock_held when the wait ends first.
   */
  acquire(name: string, ttlMs: number, waitMs: number, signal: AbortSignal, client: string): Promise<Grant> {
    return this.counted('acquire', this.take(name, ttlMs, waitMs, signal, client));
  }

  private async take(
    name: string,
    ttlMs: number,
    waitMs: number,
    signal: AbortSignal,
    client: string,
  ): Promise<Grant> {
    if (waitMs === 0) return this.granted(name, ttlMs, await this.attempt(name, ttlMs));
    const { key } = this.store.keyspace.lock(name);
    this.enter(client);
    try {
      await this.wakeups.join(key).catch((err: unknown) => {
        throw toApiError(err);
      });
      const deadline = Date.now() + waitMs;
      for (;;) {
        const since = this.wakeups.generation(key);
        const reply = await this.attempt(name, ttlMs);
        if (reply[0] === 1 || Date.now() >= deadline || signal.aborted) {
          const grant = this.granted(name, ttlMs, reply);
          // Taken for a client that left meanwhile: give it back rather than hold it for the TTL.
          if (signal.aborted) await this.release(name, grant.token).catch(() => {});
          return grant;
        }
        // Woken by a release, else when the holder's TTL would run out (it may have died holding it).
        const left = deadline - Date.now();
        const holderLeft = (reply[2] ?? -1) >= 0 ? (reply[2] as number) + 1 : left;
        await this.wakeups.sleep(key, since, Math.min(left, holderLeft), signal);
      }
    } finally {
      this.wakeups.leave(key);
      this.exit(client);
    }
  }

  renew(name: string, token: string, ttlMs: number): Promise<Grant> {
    return this.counted('renew', this.extend(name, token, ttlMs));
  }

  private async extend(name: string, token: string, ttlMs: number): Promise<Grant> {
    const { key } = this.store.keyspace.lock(name);
    const renewed = await this.call('lockRenew', key, [key, token, ttlMs], true);
    if (renewed !== 1) throw lockLost(name);
    return { name, token, fence: fenceOf(token), ttl_ms: ttlMs, expires_at: expiresAt(ttlMs) };
  }

  release(name: string, token: string): Promise<void> {
    return this.counted('release', this.giveBack(name, token));
  }

  private async giveBack(name: string, token: string): Promise<void> {
    const { key } = this.store.keyspace.lock(name);
    const how = await this.capability();
    const released =
      how === 'script'
        ? await this.call('lockRelease', key, [key, token], true)
        : await this.call('call', key, how === 'DELEX' ? [how, key, 'IFEQ', token] : [how, key, token], true);
    if (released !== 1) throw lockLost(name);
    if (how !== 'script') await this.store.redis.publish(key, '').catch(() => {});
  }

  async status(name: string): Promise<Holder> {
    const { key } = this.store.keyspace.lock(name);
    const reply = (await this.call('lockStatus', key, [key], false)) as [number, number] | null;
    if (!reply) return { name, held: false, fence: null, ttl_ms: null, expires_at: null };
    return { name, held: true, fence: reply[0], ttl_ms: reply[1], expires_at: expiresAt(reply[1]) };
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

  /** One attempt: [1, fence] and the secret when taken, [0, holder's fence, ms left] when held. */
  private async attempt(name: string, ttlMs: number): Promise<[number, number, number?, string?]> {
    const { key, fence } = this.store.keyspace.lock(name);
    const secret = randomBytes(12).toString('base64url');
    const reply = (await this.call('lockAcquire', key, [key, fence, secret, ttlMs], true)) as number[];
    return reply[0] === 1 ? [1, reply[1] as number, undefined, secret] : [0, reply[1] as number, reply[2]];
  }

  private granted(
    name: string,
    ttlMs: number,
    [taken, fence, leftMs, secret]: [number, number, number?, string?],
  ): Grant {
    if (taken === 1)
      return { name, token: `${fence}.${secret}`, fence, ttl_ms: ttlMs, expires_at: expiresAt(ttlMs) };
    const seconds = Math.max(1, Math.ceil((leftMs ?? 0) / 1000));
    throw new ApiError(
      'lock_held',
      `The lock '${name}' is held (fencing token ${fence}) for up to ${leftMs} ms more`,
      {
        details: { fence, ttl_ms: leftMs },
        retryAfter: seconds,
      },
    );
  }

  private call(name: string, key: string, argv: (string | number)[], writes: boolean): Promise<unknown> {
    return sendInternal(this.store, name, key, argv, writes);
  }

  /** Learned once per process from COMMAND INFO: Redis 8.4's DELEX IFEQ, Valkey 9's DELIFEQ, else our script. */
  private capability(): Promise<CompareAndDelete> {
    this.compareAndDelete ??= (
      this.store.redis.call('COMMAND', 'INFO', 'DELEX', 'DELIFEQ') as Promise<unknown[]>
    ).then(
      ([delex, delifeq]) => (delex ? 'DELEX' : delifeq ? 'DELIFEQ' : 'script'),
      () => {
        this.compareAndDelete = undefined;
        return 'script' as const;
      },
    );
    return this.compareAndDelete;
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
