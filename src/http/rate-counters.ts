// Rate-limit counters kept in Redis (shared by every instance), with requests far from the limit decided locally.

/** Adds `by` hits to the counter `key` (window `windowMs`): [hits, ms left in the window]. */
export type IncrementBy = (key: string, by: number, windowMs: number) => Promise<[number, number]>;

/** A request's place in its client's window: the hits counted with it, and when the window ends (ms epoch). */
export interface Count {
  readonly hits: number;
  readonly resetAt: number;
}

/** Counts are sent to Redis at least this often (ms) while requests are decided locally. */
export const FLUSH_MS = 20;
/** A count read from Redis longer ago than this (ms) no longer decides a request alone. */
export const STALE_MS = 1_000;
/** Idle counters are dropped at most this often (ms), and whenever more than MAX_ENTRIES are kept. */
const SWEEP_MS = 10_000;
const MAX_ENTRIES = 100_000;

interface Waiter {
  /** Its place among the hits of the call that carries it. */
  readonly index: number;
  readonly resolve: (count: Count) => void;
  readonly reject: (err: unknown) => void;
}

/** What this instance knows about one counter. */
interface Entry {
  readonly key: string;
  /** The counter's value in Redis after the last answered call (which included every hit sent before it). */
  known: number;
  /** When the window ends (ms epoch; from the time the call was sent, so never later than Redis's). 0: unknown. */
  resetAt: number;
  /** When the call that gave `known` was sent. */
  seenAt: number;
  /** Hits counted here and not sent yet; and those sent and not answered yet. */
  unsent: number;
  inflight: number;
  /** The requests among the unsent hits that wait for their count from Redis. */
  waiting: Waiter[] | undefined;
}

/**
 * The counters of one limit (one window length). Every hit is sent to Redis (the increments of a key are added
 * up and sent as one call: at the end of the turn when a request waits for its count, within FLUSH_MS when none
 * does). A request waits for its count from Redis unless, by the count Redis last gave this instance (at most
 * STALE_MS old, in a window not yet over) plus the hits this instance counted since, its client has used at
 * most half its limit: then it goes on at once with that count. With one instance the counts, and so the limit,
 * are exact; with several, a client gets past its limit only by sending more than half of it through other
 * instances within STALE_MS + FLUSH_MS (docs/performance.md, "Rate limiter").
 */
export class RateCounters {
  private readonly entries = new Map<string, Entry>();
  /** Entries with unsent hits. */
  private dirty: Entry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private lastSweep = Date.now();

  constructor(
    private readonly incrementBy: IncrementBy,
    private readonly windowMs: number,
  ) {}

  /** Counts one request of `key` under `limit`: its count at once when it may go on alone, else from Redis. */
  hit(key: string, limit: number): Count | Promise<Count> {
    let entry = this.entries.get(key);
    if (entry === undefined) {
      entry = { key, known: 0, resetAt: 0, seenAt: 0, unsent: 0, inflight: 0, waiting: undefined };
      this.entries.set(key, entry);
    }
    const now = Date.now();
    const hits = entry.known + entry.inflight + entry.unsent + 1;
    if (entry.resetAt > now && now - entry.seenAt <= STALE_MS && hits * 2 <= limit) {
      this.add(entry);
      this.timer ??= setTimeout(this.flush, FLUSH_MS).unref();
      return { hits, resetAt: entry.resetAt };
    }
    return new Promise<Count>((resolve, reject) => {
      const waiter = { index: entry.unsent, resolve, reject };
      if (entry.waiting) entry.waiting.push(waiter);
      else entry.waiting = [waiter];
      this.add(entry);
      this.immediate ??= setImmediate(this.flush);
    });
  }

  /** Sends the unsent hits now; resolves when Redis has answered them (tests, shutdown). */
  async settle(): Promise<void> {
    await Promise.allSettled(this.send());
  }

  private add(entry: Entry): void {
    if (entry.unsent++ === 0) this.dirty.push(entry);
  }

  private readonly flush = (): void => {
    void this.send();
  };

  /** One call per counter with unsent hits. */
  private send(): Promise<void>[] {
    clearTimeout(this.timer);
    clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    const dirty = this.dirty;
    this.dirty = [];
    const calls = dirty.map((entry) => this.call(entry));
    this.sweep();
    return calls;
  }

  private call(entry: Entry): Promise<void> {
    const n = entry.unsent;
    const waiting = entry.waiting;
    entry.unsent = 0;
    entry.waiting = undefined;
    entry.inflight += n;
    const sentAt = Date.now();
    // A call that throws at once (ioredis does for a Cluster slot no node serves) fails like one that rejects.
    return new Promise<[number, number]>((resolve) =>
      resolve(this.incrementBy(entry.key, n, this.windowMs)),
    ).then(
      ([hits, msLeft]) => {
        entry.inflight -= n;
        entry.known = hits;
        entry.seenAt = sentAt;
        entry.resetAt = sentAt + msLeft;
        if (!waiting) return;
        // The counts of calls made one after another: the n hits of this call are hits - n + 1 ... hits.
        const first = hits - n + 1;
        for (const w of waiting) w.resolve({ hits: first + w.index, resetAt: entry.resetAt });
      },
      (err: unknown) => {
        entry.inflight -= n;
        // Its next requests wait for Redis again (and fail as Redis does).
        entry.seenAt = 0;
        if (waiting) for (const w of waiting) w.reject(err);
      },
    );
  }

  /** Drops the counters that can decide nothing any more and have nothing pending. */
  private sweep(): void {
    const now = Date.now();
    if (now - this.lastSweep < SWEEP_MS && this.entries.size <= MAX_ENTRIES) return;
    this.lastSweep = now;
    for (const [key, e] of this.entries) {
      const idle = e.unsent === 0 && e.inflight === 0;
      if (idle && (e.resetAt <= now || now - e.seenAt > STALE_MS || this.entries.size > MAX_ENTRIES))
        this.entries.delete(key);
    }
  }
}
