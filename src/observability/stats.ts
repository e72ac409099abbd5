// Request, error and Redis statistics of this instance: totals since start, plus sliding windows.
//
// Windows: `per_second`, `errors.rate` and the Redis average latency use a ring of per-second
// buckets over the last 60 s; response-time average and percentiles use the last 1024 durations.
// Recording is a few array writes; the sorting happens only when a snapshot is asked for.

const WINDOW_SECONDS = 60;
const SAMPLES = 1024;

const round = (value: number, digits = 3) => Number(value.toFixed(digits));

export interface StatsSnapshot {
  requests: {
    total: number;
    per_second: number;
    by_method: Record<string, number>;
    by_endpoint: Record<string, number>;
  };
  errors: { total: number; rate: number; by_type: Record<string, number> };
  performance: { average_response_time: number; p95_response_time: number; p99_response_time: number };
  database: { operations: number; average_latency: number };
}

interface Bucket {
  second: number;
  requests: number;
  errors: number;
  redisTrips: number;
  redisMs: number;
}

function increment(counts: Map<string, number>, name: string): void {
  counts.set(name, (counts.get(name) ?? 0) + 1);
}

/** `/store/string/{key}/ttl` -> `/store/string`; routes outside the /store families have none (''). */
function familyOf(route: string): string {
  return /^\/store\/[^/]+/.exec(route)?.[0] ?? '';
}

/** The value at quantile q of ascending `sorted` (nearest rank). */
function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
}

export class Stats {
  private readonly startedAt: number;
  private total = 0;
  private errorsTotal = 0;
  private redisCommands = 0;
  private readonly byMethod = new Map<string, number>();
  private readonly byEndpoint = new Map<string, number>();
  private readonly byType = new Map<string, number>();
  /** Route template -> family ('' for none), computed once per template. */
  private readonly families = new Map<string, string>();
  // Per-second buckets, reused round-robin: bucket i holds a second s with s % 60 === i.
  private readonly buckets: Bucket[] = Array.from({ length: WINDOW_SECONDS }, () => ({
    second: 0,
    requests: 0,
    errors: 0,
    redisTrips: 0,
    redisMs: 0,
  }));
  // The last SAMPLES response times (ms), written round-robin.
  private readonly durations = new Float64Array(SAMPLES);
  private samples = 0;

  constructor(now = Date.now()) {
    this.startedAt = now;
  }

  /** One finished request: its method, route template (or 'unknown'), time in ms, and error type if it failed. */
  request(method: string, route: string, ms: number, errorType: string | undefined, now = Date.now()): void {
    const bucket = this.bucket(now);
    this.total++;
    bucket.requests++;
    increment(this.byMethod, method);
    let family = this.families.get(route);
    if (family === undefined) {
      family = familyOf(route);
      this.families.set(route, family);
    }
    if (family !== '') increment(this.byEndpoint, family);
    if (errorType !== undefined) {
      this.errorsTotal++;
      bucket.errors++;
      increment(this.byType, errorType);
    }
    this.durations[this.samples % SAMPLES] = ms;
    this.samples++;
  }

  /** One Redis round trip carrying `commands` commands. */
  redis(ms: number, commands: number, now = Date.now()): void {
    const bucket = this.bucket(now);
    this.redisCommands += commands;
    bucket.redisTrips++;
    bucket.redisMs += ms;
  }

  snapshot(now = Date.now()): StatsSnapshot {
    const second = Math.floor(now / 1000);
    let requests = 0;
    let errors = 0;
    let trips = 0;
    let redisMs = 0;
    for (const bucket of this.buckets) {
      if (second - bucket.second >= WINDOW_SECONDS) continue;
      requests += bucket.requests;
      errors += bucket.errors;
      trips += bucket.redisTrips;
      redisMs += bucket.redisMs;
    }
    // A young instance averages over the seconds it has lived, not over a full minute.
    const windowSeconds = Math.min(WINDOW_SECONDS, Math.max(1, (now - this.startedAt) / 1000));
    const recent = this.durations.slice(0, Math.min(this.samples, SAMPLES)).sort();
    const sum = recent.reduce((a, b) => a + b, 0);
    return {
      requests: {
        total: this.total,
        per_second: round(requests / windowSeconds),
        by_method: Object.fromEntries(this.byMethod),
        by_endpoint: Object.fromEntries(this.byEndpoint),
      },
      errors: {
        total: this.errorsTotal,
        rate: requests === 0 ? 0 : round(errors / requests, 4),
        by_type: Object.fromEntries(this.byType),
      },
      performance: {
        average_response_time: recent.length === 0 ? 0 : round(sum / recent.length),
        p95_response_time: round(quantile(recent, 0.95)),
        p99_response_time: round(quantile(recent, 0.99)),
      },
      database: {
        operations: this.redisCommands,
        average_latency: trips === 0 ? 0 : round(redisMs / trips),
      },
    };
  }

  private bucket(now: number): Bucket {
    const second = Math.floor(now / 1000);
    const bucket = this.buckets[second % WINDOW_SECONDS] as Bucket;
    if (bucket.second !== second) {
      bucket.second = second;
      bucket.requests = 0;
      bucket.errors = 0;
      bucket.redisTrips = 0;
      bucket.redisMs = 0;
    }
    return bucket;
  }
}
