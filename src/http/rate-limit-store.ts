// The rate limiter's store: rate-limit-redis's, with the increments of one client and turn sent to Redis as one.
import type { ClientRateLimitInfo } from 'express-rate-limit';
import { type Options, RedisStore } from 'rate-limit-redis';

/** Adds `by` hits to the counter `key` (window `windowMs`): [hits, ms left in the window]. */
export type IncrementBy = (key: string, by: number, windowMs: number) => Promise<[number, number]>;

type Waiter = { resolve: (info: ClientRateLimitInfo) => void; reject: (err: unknown) => void };

/**
 * rate-limit-redis's store, with the increments of one key asked for in the same turn of the event loop sent to
 * Redis as one call at the end of the turn (`setImmediate`): `incrementBy`, i.e. rate-limit-increment-1.lua,
 * rate-limit-redis's increment script with a count. A busy client's requests that arrive together then cost one
 * counter call instead of one each (ioredis's auto-pipeline sends it one turn later). The counts are those of the
 * calls made one after another: the n increments of one call get hits - n + 1 ... hits, in the order they were
 * asked for, so the limit holds exactly. A failed call fails its increments only. Reads and resets are the
 * store's own; `resetExpiryOnChange` is not supported.
 */
export class CoalescingRedisStore extends RedisStore {
  /** The increments asked for in this turn, per key; sent by `flush`. */
  private pending = new Map<string, Waiter[]>();

  constructor(
    options: Options,
    private readonly incrementBy: IncrementBy,
  ) {
    if (options.resetExpiryOnChange)
      throw new Error('CoalescingRedisStore does not support resetExpiryOnChange');
    super(options);
  }

  override increment(key: string): Promise<ClientRateLimitInfo> {
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) setImmediate(() => this.flush());
      const waiting = this.pending.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
    });
  }

  private flush(): void {
    const batches = this.pending;
    this.pending = new Map();
    for (const [key, batch] of batches) {
      // A call that throws at once rejects its batch like one that fails later; the other keys still go.
      new Promise<[number, number]>((resolve) =>
        resolve(this.incrementBy(this.prefixKey(key), batch.length, this.windowMs)),
      ).then(
        ([hits, msLeft]) => {
          const resetTime = new Date(Date.now() + msLeft);
          const first = hits - batch.length + 1;
          for (const [i, w] of batch.entries()) w.resolve({ totalHits: first + i, resetTime });
        },
        (err) => {
          for (const w of batch) w.reject(err);
        },
      );
    }
  }
}
