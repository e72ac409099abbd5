// The statistics snapshot, from the parts of one instance or of several workers added up.

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

/** What one instance (worker) reports; the parts of several workers add up to one snapshot. */
export interface StatsPart {
  total: number;
  errors: number;
  redisCommands: number;
  byMethod: Record<string, number>;
  byEndpoint: Record<string, number>;
  byType: Record<string, number>;
  /** Sums over the sliding window, and how many seconds it covers. */
  window: { requests: number; errors: number; redisTrips: number; redisMs: number; seconds: number };
  /** The latest response times in ms (up to 1024). */
  durations: number[];
}

/** The value at quantile q of ascending `sorted` (nearest rank). */
function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

function addCounts(maps: Array<Record<string, number>>): Record<string, number> {
  const total: Record<string, number> = {};
  for (const map of maps) for (const [name, n] of Object.entries(map)) total[name] = (total[name] ?? 0) + n;
  return total;
}

/**
 * One snapshot from the parts of one or several workers: counts and rates add up, ratios are taken over
 * the summed window, and the percentiles come from the workers' recent durations put together (never
 * an average of per-worker percentiles).
 */
export function summarize(parts: StatsPart[]): StatsSnapshot {
  const windows = parts.map((p) => p.window);
  const requests = sum(windows.map((w) => w.requests));
  const trips = sum(windows.map((w) => w.redisTrips));
  const recent = Float64Array.from(parts.flatMap((p) => p.durations)).sort();
  return {
    requests: {
      total: sum(parts.map((p) => p.total)),
      per_second: round(sum(windows.map((w) => w.requests / w.seconds))),
      by_method: addCounts(parts.map((p) => p.byMethod)),
      by_endpoint: addCounts(parts.map((p) => p.byEndpoint)),
    },
    errors: {
      total: sum(parts.map((p) => p.errors)),
      rate: requests === 0 ? 0 : round(sum(windows.map((w) => w.errors)) / requests, 4),
      by_type: addCounts(parts.map((p) => p.byType)),
    },
    performance: {
      average_response_time: recent.length === 0 ? 0 : round(sum([...recent]) / recent.length),
      p95_response_time: round(quantile(recent, 0.95)),
      p99_response_time: round(quantile(recent, 0.99)),
    },
    database: {
      operations: sum(parts.map((p) => p.redisCommands)),
      average_latency: trips === 0 ? 0 : round(sum(windows.map((w) => w.redisMs)) / trips),
    },
  };
}
