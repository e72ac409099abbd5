// The rate limiter's store: rate-limit-redis's, counting through RateCounters (a request far from its limit is answered at once).
import type { ClientRateLimitInfo } from 'express-rate-limit';
import { type Options, RedisStore } from 'rate-limit-redis';
import { type Count, type IncrementBy, RateCounters } from './rate-counters';

/**
 * RedisStore, its `increment` left out of the type: ours may answer synchronously, which express-rate-limit v8's
 * Store interface allows (`Promise<IncrementResponse> | IncrementResponse`) and RedisStore's declaration does not.
 */
const RedisStoreBase = RedisStore as new (options: Options) => Omit<RedisStore, 'increment'>;

const info = ({ hits, resetAt }: Count): ClientRateLimitInfo => ({
  totalHits: hits,
  resetTime: new Date(resetAt),
});

/**
 * rate-limit-redis's store whose increments are counted by RateCounters (rate-counters.ts): every hit reaches
 * Redis through `incrementBy` (rate-limit-increment-1.lua, rate-limit-redis's increment script with a count), and
 * a client that has used at most half of `limit()` gets its count at once, without waiting for the round trip.
 * Reads and resets are the store's own (they see the hits sent so far); `resetExpiryOnChange` is not supported.
 */
export class CountingRedisStore extends RedisStoreBase {
  private counters: RateCounters | undefined;

  constructor(
    options: Options,
    private readonly incrementBy: IncrementBy,
    /** The limit a request is decided against (express-rate-limit's `limit` option, read per request). */
    private readonly limit: () => number,
  ) {
    if (options.resetExpiryOnChange)
      throw new Error('CountingRedisStore does not support resetExpiryOnChange');
    super(options);
  }

  increment(key: string): ClientRateLimitInfo | Promise<ClientRateLimitInfo> {
    // `windowMs` is set by the store's init, which express-rate-limit calls when it is created.
    this.counters ??= new RateCounters(this.incrementBy, this.windowMs);
    const count = this.counters.hit(this.prefixKey(key), this.limit());
    return count instanceof Promise ? count.then(info) : info(count);
  }

  /** Sends the hits counted locally now; resolves when Redis has answered them (tests, shutdown). */
  async settle(): Promise<void> {
    await this.counters?.settle();
  }
}
