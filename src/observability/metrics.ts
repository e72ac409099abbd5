// Prometheus metrics of one app: a private prom-client Registry with request, error and Redis instruments.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

type Labels = { method: string; endpoint: string };
interface Counted {
  readonly labels: Labels;
  /** Requests answered, and how many of them the counter has been given. */
  count: number;
  reported: number;
}

// Finer than prom-client's defaults at the low end: most requests take well under 5 ms.
const RESPONSE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const REDIS_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

const UNCONVENTIONAL_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** One queue's counts, for the queue gauges. */
export interface QueueCounts {
  readonly queue: string;
  readonly states: Record<string, number>;
  readonly oldestReadyAge: number;
}

export class Metrics {
  readonly registry = new Registry();
  /** Per endpoint and method: one label object reused by every request (no allocation per request), and counts. */
  private readonly labels = new Map<string, Map<string, Counted>>();
  // Counted per request in `labels` and handed to prom-client when scraped: a Counter's inc() hashes the labels.
  private readonly requests = new Counter({
    name: 'svc_requests_total',
    help: 'Total HTTP requests, by method and route template',
    labelNames: ['method', 'endpoint'] as const,
    registers: [this.registry],
    collect: () => this.reportRequests(),
  });
  private readonly responseTime = new Histogram({
    name: 'svc_response_time_seconds',
    help: 'HTTP response time in seconds, by method and route template',
    labelNames: ['method', 'endpoint'] as const,
    buckets: RESPONSE_BUCKETS,
    registers: [this.registry],
  });
  private readonly errors = new Counter({
    name: 'svc_errors_total',
    help: 'Total error responses (status >= 400), by error type',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  private readonly redisTime = new Histogram({
    name: 'svc_redis_command_duration_seconds',
    help: "Redis round trip of one operation's command or of one batch's script call, in seconds",
    buckets: REDIS_BUCKETS,
    registers: [this.registry],
  });
  private readonly redisCommands = new Counter({
    name: 'svc_redis_commands_total',
    help: 'Redis commands sent for data operations',
    registers: [this.registry],
  });
  private readonly feedSubscriberGauge = new Gauge({
    name: 'svc_changes_subscribers',
    help: 'Change feed subscribers of this process now, by transport (sse, websocket, poll)',
    labelNames: ['transport'] as const,
    registers: [this.registry],
  });
  private readonly feedEvents = new Counter({
    name: 'svc_changes_events_delivered_total',
    help: 'Change feed events sent to subscribers, by transport',
    labelNames: ['transport'] as const,
    registers: [this.registry],
  });
  private readonly feedDrops = new Counter({
    name: 'svc_changes_subscribers_dropped_total',
    help: 'Change feed subscribers dropped by the service (too slow, shutting down), by transport',
    labelNames: ['transport'] as const,
    registers: [this.registry],
  });
  private readonly upstashCommands = new Counter({
    name: 'svc_upstash_commands_total',
    help: 'Redis commands run through /upstash (pipelines and transactions included), by command',
    labelNames: ['command'] as const,
    registers: [this.registry],
  });

  private readonly lockCalls = new Counter({
    name: 'svc_locks_operations_total',
    help: 'Lock operations, by operation (acquire, renew, release) and outcome (ok, held, lost, error)',
    labelNames: ['operation', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly lockWaiting = new Gauge({
    name: 'svc_locks_waiting',
    help: 'Lock acquires of this process waiting for a release now',
    registers: [this.registry],
  });
  private readonly rateLimitCalls = new Counter({
    name: 'svc_ratelimit_decisions_total',
    help: 'Rate-limit decisions for callers (POST /store/ratelimits/{policy}/check and /peek), by mode and whether allowed',
    labelNames: ['mode', 'allowed'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    // prom-client's `_total` gauges break the Prometheus naming rule that only counters end in `_total`
    // (`promtool check metrics` fails on them); the labelled `nodejs_active_*` gauges hold the same counts by type.
    for (const name of UNCONVENTIONAL_DEFAULTS) this.registry.removeSingleMetric(name);
  }

  /** Commands through /upstash; `command` comes from Redis's command table, so the label values are bounded. */
  upstashCommand(command: string, count = 1): void {
    this.upstashCommands.inc({ command }, count);
  }

  request(method: string, endpoint: string, seconds: number, errorType: string | undefined): void {
    let byMethod = this.labels.get(endpoint);
    if (!byMethod) {
      byMethod = new Map();
      this.labels.set(endpoint, byMethod);
    }
    let counted = byMethod.get(method);
    if (!counted) {
      counted = { labels: { method, endpoint }, count: 0, reported: 0 };
      byMethod.set(method, counted);
    }
    counted.count++;
    this.responseTime.observe(counted.labels, seconds);
    if (errorType !== undefined) this.errors.inc({ type: errorType });
  }

  private reportRequests(): void {
    for (const byMethod of this.labels.values())
      for (const counted of byMethod.values()) {
        if (counted.count > counted.reported)
          this.requests.inc(counted.labels, counted.count - counted.reported);
        counted.reported = counted.count;
      }
  }

  redis(seconds: number, commands: number): void {
    this.redisTime.observe(seconds);
    this.redisCommands.inc(commands);
  }

  feedSubscribers(transport: string, delta: number): void {
    this.feedSubscriberGauge.inc({ transport }, delta);
  }

  /** Per transport, the counter child (labels resolved once: this runs for every event sent to every subscriber). */
  feedDelivered(transport: string): { inc(): void } {
    return this.feedEvents.labels(transport);
  }

  feedDropped(transport: string): void {
    this.feedDrops.inc({ transport });
  }

  /**
   * Queue gauges (src/queues/gauges.ts): `read` is called at each scrape and answers each queue's counts by state
   * and the age of its oldest ready message. Registered once per app, by the queue routes.
   */
  watchQueues(read: () => Promise<QueueCounts[]>): void {
    // The first registered reads Redis and sets both: the registry collects them in registration order.
    const age = new Gauge({
      name: 'svc_queue_oldest_ready_age_seconds',
      help: 'Seconds since the oldest ready message of a queue was sent (0 when none is ready)',
      labelNames: ['queue'],
      registers: [],
      // Every worker reads the same Redis (SVC_WORKERS > 1): merged, the figure is one of them, not their sum.
      aggregator: 'max',
    });
    new Gauge({
      name: 'svc_queue_messages',
      help: 'Messages of a queue by state (ready, in_flight, delayed, waiting, dead), read from Redis at each scrape',
      labelNames: ['queue', 'state'],
      registers: [this.registry],
      aggregator: 'max',
      async collect() {
        const rows = await read().catch(() => []);
        this.reset();
        age.reset();
        for (const row of rows) {
          for (const [state, value] of Object.entries(row.states))
            this.set({ queue: row.queue, state }, value);
          age.set({ queue: row.queue }, row.oldestReadyAge);
        }
      },
    });
    this.registry.registerMetric(age);
  }

  lockOperation(operation: 'acquire' | 'renew' | 'release', outcome: 'ok' | 'held' | 'lost' | 'error'): void {
    this.lockCalls.inc({ operation, outcome });
  }

  lockWaiters(delta: number): void {
    this.lockWaiting.inc(delta);
  }

  rateLimitDecision(mode: 'check' | 'peek', allowed: boolean): void {
    this.rateLimitCalls.inc({ mode, allowed: String(allowed) });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
