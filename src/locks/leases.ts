// Leases (etcd-style): a TTL kept alive by its holder; the locks attached to it end with it.
import { randomBytes } from 'node:crypto';
import { sendInternal } from '../engine/send';
import { ApiError } from '../errors';
import type { Store } from '../redis/store';
import type { Locks } from './locks';

export interface LeaseState {
  lease: string;
  ttl_ms: number;
  expires_at: string;
  /** The names of the locks attached to it (still held with the token they were attached with). */
  locks: string[];
}

const expiresAt = (ms: number) => new Date(Date.now() + ms).toISOString();
const gone = (id: string) =>
  new ApiError('not_found', `Lease '${id}' does not exist (it expired or was revoked)`);

export class Leases {
  constructor(
    private readonly storeOf: () => Store,
    private readonly locks: Locks,
  ) {}

  private get store(): Store {
    return this.storeOf();
  }

  /** A new lease of `ttlMs`, its id unguessable (whoever has it may keep it alive or revoke it), after `scope`. */
  async grant(scope: string, ttlMs: number): Promise<LeaseState> {
    const lease = scope + randomBytes(16).toString('hex');
    const { key } = this.store.keyspace.lease(lease);
    await sendInternal(this.store, 'set', key, [key, ttlMs, 'PX', ttlMs], true);
    return { lease, ttl_ms: ttlMs, expires_at: expiresAt(ttlMs), locks: [] };
  }

  /** The lease's TTL left, or 404 when it is gone. */
  async remaining(id: string): Promise<number> {
    const { key } = this.store.keyspace.lease(id);
    const left = (await sendInternal(this.store, 'pttl', key, [key], false)) as number;
    if (left <= 0) throw gone(id);
    return left;
  }

  /** The names of the locks attached to the lease. */
  async attached(id: string): Promise<{ locks: string[] }> {
    const { locks } = this.store.keyspace.lease(id);
    return { locks: (await sendInternal(this.store, 'hkeys', locks, [locks], false)) as string[] };
  }

  /** Records that `name` is held with `token` under the lease (its TTL is at most the lease's). */
  async attach(id: string, name: string, token: string, ttlMs: number): Promise<void> {
    const { locks } = this.store.keyspace.lease(id);
    await sendInternal(this.store, 'hset', locks, [locks, name, token], true);
    await sendInternal(this.store, 'pexpire', locks, [locks, ttlMs], true);
  }

  /**
   * Sets the lease's TTL to `ttlMs` (its own by default) and its attached locks' too; locks no longer held with
   * their token are dropped from it. 404 when the lease is gone.
   */
  async keepAlive(id: string, ttlMs?: number): Promise<LeaseState> {
    const { key, locks } = this.store.keyspace.lease(id);
    const ttl = ttlMs ?? Number(await sendInternal(this.store, 'get', key, [key], false));
    if (!ttl) throw gone(id);
    const attached = (await sendInternal(this.store, 'leaseKeepalive', key, [key, locks, ttl], true)) as
      | string[]
      | null;
    if (!attached) throw gone(id);
    const held: string[] = [];
    for (let i = 0; i < attached.length; i += 2) {
      const [name, token] = [attached[i] as string, attached[i + 1] as string];
      const kept = await this.locks.renew('lock', name, token, ttl).then(
        () => true,
        (err: unknown) => {
          if (err instanceof ApiError && err.type === 'lock_lost') return false;
          throw err;
        },
      );
      if (kept) held.push(name);
      else await sendInternal(this.store, 'hdel', locks, [locks, name], true);
    }
    return { lease: id, ttl_ms: ttl, expires_at: expiresAt(ttl), locks: held };
  }

  /** Ends the lease now and releases its attached locks (waking their waiters). False when it was already gone. */
  async revoke(id: string): Promise<{ revoked: boolean; locks_released: number }> {
    const { key, locks } = this.store.keyspace.lease(id);
    const attached = (await sendInternal(this.store, 'hgetall', locks, [locks], false)) as Record<
      string,
      string
    >;
    const removed = (await sendInternal(this.store, 'del', key, [key, locks], true)) as number;
    let released = 0;
    for (const [name, token] of Object.entries(attached))
      released += await this.locks.release('lock', name, token).then(
        () => 1,
        () => 0,
      );
    return { revoked: removed > 0, locks_released: released };
  }
}
