// Drives a server with autocannon over keep-alive connections: a warm-up, then the measured run.
import type { EventEmitter } from 'node:events';
import autocannon from 'autocannon';
import { sampleProcess, type Usage } from './processes';

export interface LoadOptions {
  connections: number;
  /** Seconds of the measured run. */
  duration: number;
  /** Seconds of load before it, not measured (JIT, connection pools, Redis caches). */
  warmup: number;
  /** redis-server's pid: its CPU is sampled too (what shares the machine with the service). */
  redisPid?: number;
}

/** One kind of request; `setupRequest` may vary the path per request. */
export type RequestSpec = Pick<autocannon.Request, 'method' | 'path' | 'body' | 'setupRequest'> & {
  headers?: Record<string, string>;
};

export interface Measurement {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Responses outside 2xx, and connection errors or timeouts: a run with any is not a valid figure. */
  non2xx: number;
  errors: number;
  /** The server's largest RSS and its CPU use (% of one core) during the run. */
  usage: Usage;
  /** CPU the load generator (this process) used meanwhile, % of one core: on a small machine it competes. */
  loadgenCpuPercent: number;
  /** CPU redis-server used meanwhile, % of one core, when its pid is given (LoadOptions.redisPid). */
  redisCpuPercent?: number;
  /** When the measured run started and ended, process.hrtime in microseconds (to cut CPU profiles). */
  windowUs: [number, number];
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

function fire(url: string, spec: RequestSpec, connections: number, duration: number) {
  // autocannon reads a key that is present but undefined as set (setupRequest: undefined throws).
  const request = Object.fromEntries(Object.entries(spec).filter(([, v]) => v !== undefined));
  return autocannon({ url, connections, duration, pipelining: 1, timeout: 10, requests: [request] });
}

const cpuPercent = (used: NodeJS.CpuUsage, [from, to]: [number, number]) =>
  ((used.user + used.system) / (to - from)) * 100;

/** The value below which a fraction `p` of the sorted values lie. */
const percentile = (sorted: Float64Array, p: number) => sorted[Math.floor(p * (sorted.length - 1))] ?? 0;

/** Warm-up, then a measured run while the RSS of `pid` (and its workers) is sampled. */
export async function drive(
  url: string,
  spec: RequestSpec,
  pid: number,
  opts: LoadOptions,
): Promise<Measurement> {
  if (opts.warmup > 0) await fire(url, spec, opts.connections, opts.warmup);
  const sampler = sampleProcess(pid);
  const redis = opts.redisPid === undefined ? undefined : sampleProcess(opts.redisPid);
  const loadgen = process.cpuUsage();
  const start = nowUs();
  // autocannon's own histogram keeps whole milliseconds; its 'response' events carry the exact time.
  // Without a callback autocannon returns its event emitter made thenable (the types only say Promise).
  const run = fire(url, spec, opts.connections, opts.duration) as Promise<autocannon.Result> & EventEmitter;
  const latencies: number[] = [];
  run.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) latencies.push(ms);
  });
  const result = await run;
  const windowUs: [number, number] = [start, nowUs()];
  const sorted = Float64Array.from(latencies).sort();
  return {
    reqPerSec: result.requests.total / result.duration,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    usage: sampler.stop(),
    loadgenCpuPercent: cpuPercent(process.cpuUsage(loadgen), windowUs),
    ...(redis ? { redisCpuPercent: redis.stop().cpuPercent } : {}),
    windowUs,
  };
}

/** The lower median of `xs` by `value` (the middle one, or the lower of the two middle ones). */
export function medianBy<T>(xs: readonly T[], value: (x: T) => number): T | undefined {
  return [...xs].sort((a, b) => value(a) - value(b))[Math.floor((xs.length - 1) / 2)];
}

/** The lower median of some numbers; 0 when there are none. */
export const median = (xs: readonly number[]): number => medianBy(xs, (x) => x) ?? 0;

/**
 * Several runs of one target and scenario as one: the run with the median req/s (its latencies and CPU belong
 * together), with the largest RSS and the errors of all of them.
 */
export function medianRun(runs: Measurement[]): Measurement {
  if (runs.length === 0) throw new Error('medianRun needs at least one run');
  const middle = medianBy(runs, (m) => m.reqPerSec) as Measurement;
  const sum = (f: (m: Measurement) => number) => runs.reduce((total, m) => total + f(m), 0);
  const max = (f: (m: Measurement) => number) => Math.max(...runs.map(f));
  return {
    ...middle,
    requests: sum((m) => m.requests),
    non2xx: sum((m) => m.non2xx),
    errors: sum((m) => m.errors),
    usage: {
      ...middle.usage,
      processMb: max((m) => m.usage.processMb),
      totalMb: max((m) => m.usage.totalMb),
    },
  };
}
