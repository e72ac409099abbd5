// Request, error and Redis statistics of this instance: totals since start, plus sliding windows.
//
// Windows: `per_second`, `errors.rate` and the Redis average latency use a ring of per-second
// buckets over the last 60 s; response-time average and percentiles use the last 1024 durations.
// Recording is a few array writes; the sorting happens only when a snapshot is asked for.

import { type StatsPart, type StatsSnapshot, summarize } from './summary';

const WINDOW_SECONDS = 60;
const SAMPLES = 1024;

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

  /** This instance's figures in a form that adds up across workers (see summarize). */
  part(now = Date.now()): StatsPart {
    const second = Math.floor(now / 1000);
    const window = { requests: 0, errors: 0, redisTrips: 0, redisMs: 0, seconds: 0 };
    for (const bucket of this.buckets) {
      if (second - bucket.second >= WINDOW_SECONDS) continue;
      window.requests += bucket.requests;
      window.errors += bucket.errors;
      window.redisTrips += bucket.redisTrips;
      window.redisMs += bucket.redisMs;
    }
    // A young instance averages over the seconds it has lived, not over a full minute.
    window.seconds = Math.min(WINDOW_SECONDS, Math.max(1, (now - this.startedAt) / 1000));
    return {
      total: this.total,
      errors: this.errorsTotal,
      redisCommands: this.redisCommands,
      byMethod: Object.fromEntries(this.byMethod),
      byEndpoint: Object.fromEntries(this.byEndpoint),
      byType: Object.fromEntries(this.byType),
      window,
      durations: Array.from(this.durations.subarray(0, Math.min(this.samples, SAMPLES))),
    };
  }

  snapshot(now = Date.now()): StatsSnapshot {
    return summarize([this.part(now)]);
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
