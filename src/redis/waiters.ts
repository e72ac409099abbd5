// A small capped pool of dedicated connections for blocking commands (a list pop's `wait`), closed in one call.
import { ApiError, REDIS_RETRY_AFTER } from '../errors';
import { duplicate, type RedisClient } from './client';

/**
 * A blocking command holds its connection until it is answered: on the shared data connection it would hold every
 * other request back. Each waiter gets a connection of its own, and at most `max` wait at a time, so that waiting
 * clients cannot starve the others (nor open connections without bound). Idle connections are kept for reuse.
 */
export class WaiterPool {
  private readonly idle: RedisClient[] = [];
  private readonly all = new Set<RedisClient>();
  private busy = 0;
  /** Waiters per client (a credential, or an address): no one client holds every connection. */
  private readonly perClient = new Map<string, number>();
  private closed = false;

  /** `commandTimeoutMs` must exceed the longest wait: ioredis would otherwise time a legitimate wait out. */
  constructor(
    private readonly redis: RedisClient,
    readonly max: number,
    private readonly commandTimeoutMs: number,
    /** SVC_LIST_MAX_WAITERS_PER_CLIENT. */
    readonly maxPerClient: number = max,
  ) {}

  /** How many waiters hold a connection now. */
  get waiting(): number {
    return this.busy;
  }

  /**
   * A connected connection of its own for `client`, or 503 with Retry-After when `max` waiters are already waiting,
   * 429 when `client` already holds `maxPerClient` of them. Hand it back with `release(conn, reusable, client)`.
   */
  async acquire(client = ''): Promise<RedisClient> {
    if (this.closed) throw unavailable('The service is shutting down');
    if (this.busy >= this.max) {
      throw unavailable(`All ${this.max} waiting pops (SVC_LIST_MAX_WAITERS) are in use; retry shortly`);
    }
    this.count(client);
    this.busy++;
    const conn = this.idle.pop() ?? this.open();
    try {
      if (conn.status === 'wait') await conn.connect();
      return conn;
    } catch (err) {
      this.release(conn, false, client);
      throw err;
    }
  }

  /**
   * Counts a waiter of `client` that shares a connection (a queue's long poll, src/queues/poller.ts) against
   * `maxPerClient` (429 beyond), without taking a connection; the answer ends it (once).
   */
  admit(client: string): () => void {
    this.count(client);
    let done = false;
    return () => {
      if (!done) this.uncount(client);
      done = true;
    };
  }

  /** 429 when `client` already holds `maxPerClient` waiters; otherwise one more. */
  private count(client: string): void {
    const held = this.perClient.get(client) ?? 0;
    if (held >= this.maxPerClient) {
      throw new ApiError(
        'rate_limit_exceeded',
        `This client already holds ${this.maxPerClient} waiting pops or receives (SVC_LIST_MAX_WAITERS_PER_CLIENT); retry when one has answered`,
        { retryAfter: REDIS_RETRY_AFTER },
      );
    }
    this.perClient.set(client, held + 1);
  }

  private uncount(client: string): void {
    const left = (this.perClient.get(client) ?? 1) - 1;
    if (left > 0) this.perClient.set(client, left);
    else this.perClient.delete(client);
  }

  /** Hands a connection back; one that may still be blocked (its client left, it failed) is closed instead. */
  release(conn: RedisClient, reusable: boolean, client = ''): void {
    this.busy--;
    this.uncount(client);
    if (reusable && !this.closed && conn.status === 'ready') this.idle.push(conn);
    else this.drop(conn);
  }

  /** Ends every connection at once: a blocked one cannot QUIT before its wait ends; its request answers 503. */
  close(): void {
    this.closed = true;
    for (const conn of this.all) this.drop(conn);
    this.idle.length = 0;
  }

  private open(): RedisClient {
    const conn = duplicate(this.redis, { commandTimeout: this.commandTimeoutMs, lazyConnect: true });
    // The data connection reports the same causes.
    conn.on('error', () => {});
    this.all.add(conn);
    return conn;
  }

  /**
   * Closes a connection at once (a blocked one too: its command fails). Once only: each ioredis disconnect arms a
   * timer that only the socket's close clears, so a second one would hold the process for a while after closing.
   */
  drop(conn: RedisClient): void {
    if (!this.all.delete(conn)) return;
    try {
      conn.disconnect();
    } catch {
      // Already closed.
    }
  }
}

function unavailable(message: string): ApiError {
  return new ApiError('service_unavailable', message, { retryAfter: REDIS_RETRY_AFTER });
}
