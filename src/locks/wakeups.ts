// One pub/sub connection per process that wakes the acquires waiting on a lock when its holder releases it.
import { duplicate, type RedisClient } from '../redis/client';

interface Channel {
  /** Waiting acquires that joined it. */
  members: number;
  /** Bumped by each release message (and each reconnection, when messages may have been lost). */
  generation: number;
  readonly wake: Set<() => void>;
  /** Resolves once Redis confirmed the subscription. */
  readonly subscribed: Promise<unknown>;
}

/**
 * A waiting acquire costs Redis nothing while it waits: it joins its lock's channel on this one connection (one
 * SUBSCRIBE per lock name per process, however many wait on it), tries once, and sleeps until a release message,
 * the holder's TTL running out, or its own deadline. A reconnection wakes every waiter (a release may have been
 * missed meanwhile): ioredis subscribes again by itself.
 */
export class Wakeups {
  private conn?: RedisClient;
  private readonly channels = new Map<string, Channel>();
  private closed = false;

  constructor(private readonly redisOf: () => RedisClient) {}

  /** Joins `channel` (subscribing on first use) and resolves once a release on it can no longer be missed. */
  async join(channel: string): Promise<void> {
    let entry = this.channels.get(channel);
    if (!entry) {
      const conn = this.connection();
      // No offline queue (client.ts): a command sent before the connection is ready would fail at once.
      const connected = conn.status === 'wait' ? conn.connect() : Promise.resolve();
      const subscribed = connected.then(() => conn.subscribe(channel));
      entry = { members: 0, generation: 0, wake: new Set(), subscribed };
      this.channels.set(channel, entry);
    }
    entry.members++;
    try {
      await entry.subscribed;
    } catch (err) {
      this.leave(channel);
      throw err;
    }
  }

  leave(channel: string): void {
    const entry = this.channels.get(channel);
    if (!entry || --entry.members > 0) return;
    this.channels.delete(channel);
    if (!this.closed) this.conn?.unsubscribe(channel).catch(() => {});
  }

  /** How many releases (and reconnections) `channel` has seen: what `sleep` compares against. */
  generation(channel: string): number {
    return this.channels.get(channel)?.generation ?? 0;
  }

  /**
   * Resolves after `ms`, on the next message of `channel` (at once if one came after `since`), or when `signal`
   * aborts; never rejects.
   */
  sleep(channel: string, since: number, ms: number, signal: AbortSignal): Promise<void> {
    const entry = this.channels.get(channel);
    if (!entry || entry.generation !== since || signal.aborted || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        entry.wake.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      entry.wake.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** How many lock names this process waits on now. */
  get size(): number {
    return this.channels.size;
  }

  close(): void {
    this.closed = true;
    for (const entry of this.channels.values()) for (const wake of [...entry.wake]) wake();
    this.channels.clear();
    this.conn?.disconnect();
  }

  private connection(): RedisClient {
    if (this.conn) return this.conn;
    const conn = duplicate(this.redisOf(), { enableAutoPipelining: false, lazyConnect: true });
    conn.on('error', () => {});
    conn.on('message', (channel: string) => this.wakeUp(this.channels.get(channel)));
    let connected = false;
    conn.on('ready', () => {
      // After a reconnection, a release may have been published while no subscription was in place.
      if (connected) for (const entry of this.channels.values()) this.wakeUp(entry);
      connected = true;
    });
    this.conn = conn;
    return conn;
  }

  private wakeUp(entry: Channel | undefined): void {
    if (!entry) return;
    entry.generation++;
    for (const wake of [...entry.wake]) wake();
  }
}
