// The service's own charts (admin keys): request rate and latency by route (Prometheus counters), errors, Redis
// memory, latency and connections, HTTP clients; sampled every 2 s from /store/admin/{stats,health,metrics,clients}.
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { Chart, type Series } from './chart';
import { send } from './raw';
import { describe, type Session } from './session';

const EVERY_MS = 2000;
const KEEP = 60;
const ROUTES_SHOWN = 6;

interface Sample {
  at: number;
  /** Per route (`/store/hash/:key`): requests and response-time seconds since start. */
  routes: Record<string, { count: number; seconds: number }>;
  errors: number;
  errorRate: number;
  p95: number;
  p99: number;
  memory: number | null;
  redisLatency: number | null;
  pool: number;
  clients: number;
  byType: Record<string, number>;
}

/** One sample line of either metric; the labels are matched greedily, since route templates hold braces (`{key}`). */
const LINE = /^(svc_requests_total|svc_response_time_seconds_sum)\{(.*)\} ([-+.\deE]+|NaN)$/;

/** Requests and summed response time per route, from the Prometheus text (all methods of a route together). */
function parseMetrics(text: string): Sample['routes'] {
  const routes: Sample['routes'] = {};
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (!m) continue;
    const endpoint = /endpoint="([^"]*)"/.exec(m[2] as string)?.[1] ?? '?';
    routes[endpoint] ??= { count: 0, seconds: 0 };
    const r = routes[endpoint];
    if (m[1] === 'svc_requests_total') r.count += Number(m[3]);
    else r.seconds += Number(m[3]);
  }
  return routes;
}

async function sample(session: Session): Promise<Sample> {
  const [stats, health, clients, metrics] = await Promise.all([
    send(session, 'GET', '/store/admin/stats', {}),
    send(session, 'GET', '/store/admin/health', {}).catch(() => ({ data: null })),
    send(session, 'GET', '/store/admin/clients', {}),
    session.gw.api.GET('/store/admin/metrics', { parseAs: 'text' }),
  ]);
  const s = stats.data;
  return {
    at: Date.now(),
    routes: metrics.response.ok ? parseMetrics(metrics.data as string) : {},
    errors: s.errors.total,
    errorRate: s.errors.rate,
    p95: s.performance.p95_response_time,
    p99: s.performance.p99_response_time,
    memory: health.data?.memory?.used ?? null,
    redisLatency: health.data?.database?.latency ?? null,
    pool: s.database.connection_pool.active,
    clients: clients.data.total_clients,
    byType: s.errors.by_type,
  };
}

/**
 * Per-second rates and average latency (ms) per route between consecutive samples, for the routes busiest within
 * the samples kept (not since start: what is busy now).
 */
function routeSeries(samples: Sample[]): { rate: Series[]; latency: Series[] } {
  const lastRoutes = samples.at(-1)?.routes ?? {};
  const firstRoutes = samples[0]?.routes ?? {};
  const recent = (name: string) => (lastRoutes[name]?.count ?? 0) - (firstRoutes[name]?.count ?? 0);
  const busiest = Object.keys(lastRoutes)
    .filter((name) => name.startsWith('/store/'))
    .sort((a, b) => recent(b) - recent(a))
    .slice(0, ROUTES_SHOWN);
  const pairs = samples.slice(1).map((cur, i) => [samples[i] as Sample, cur] as const);
  const rate = busiest.map((name) => ({
    name,
    values: pairs.map(
      ([a, b]) => ((b.routes[name]?.count ?? 0) - (a.routes[name]?.count ?? 0)) / ((b.at - a.at) / 1000),
    ),
  }));
  const latency = busiest.map((name) => ({
    name,
    values: pairs.map(([a, b]) => {
      const n = (b.routes[name]?.count ?? 0) - (a.routes[name]?.count ?? 0);
      return n > 0 ? (((b.routes[name]?.seconds ?? 0) - (a.routes[name]?.seconds ?? 0)) / n) * 1000 : null;
    }),
  }));
  return { rate, latency };
}

const perSecond = (v: number) => `${v.toFixed(1)}/s`;
const ms = (v: number) => `${v.toFixed(1)} ms`;
const mib = (v: number) => `${(v / 1048576).toFixed(1)} MiB`;
const count = (v: number) => v.toFixed(0);
const pct = (v: number) => `${(v * 100).toFixed(1)} %`;

export function ServiceView({ session }: { session: Session }) {
  const [samples, setSamples] = useState<Sample[]>([]);
  const [error, setError] = useState('');
  useEffect(() => {
    let stopped = false;
    const tick = async () => {
      try {
        const next = await sample(session);
        if (!stopped) setSamples((all) => [...all, next].slice(-KEEP));
        setError('');
      } catch (err) {
        setError(describe(err));
      }
    };
    void tick();
    const timer = setInterval(tick, EVERY_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [session]);
  const { rate, latency } = routeSeries(samples);
  const pairs = samples.slice(1).map((b, i) => [samples[i] as Sample, b] as const);
  const errorsPerSecond = pairs.map(([a, b]) => (b.errors - a.errors) / ((b.at - a.at) / 1000));
  const last = samples.at(-1);
  return html`<section class="panel service" id="service">
    <h2>Service <span class="muted">sampled every ${EVERY_MS / 1000} s by this page</span></h2>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <div class="charts">
      <${Chart} id="chart-rate" title="Requests per second by route" series=${rate} format=${perSecond} />
      <${Chart} id="chart-latency" title="Average response time by route" series=${latency} format=${ms} />
      <${Chart} id="chart-percentiles" title="Response time percentiles (latest 1024 requests)" format=${ms}
        series=${[{ name: 'p95', values: samples.map((s) => s.p95) }, { name: 'p99', values: samples.map((s) => s.p99) }]} />
      <${Chart} id="chart-errors" title="Errors per second" format=${perSecond} series=${[{ name: 'errors', values: errorsPerSecond }]} />
      <${Chart} id="chart-memory" title="Redis memory used" format=${mib} series=${[{ name: 'used', values: samples.map((s) => s.memory) }]} />
      <${Chart} id="chart-clients" title="Clients" format=${count}
        series=${[{ name: 'HTTP clients seen', values: samples.map((s) => s.clients) }, { name: 'Redis connections busy', values: samples.map((s) => s.pool) }]} />
    </div>
    ${
      last &&
      html`<p class="muted">Error rate over the last minute: ${pct(last.errorRate)}; Redis round trip: ${last.redisLatency === null ? '—' : ms(last.redisLatency)}.</p>
      <table class="grid" id="errors-by-type"><thead><tr><th>Error type</th><th>Since start</th></tr></thead>
        <tbody>${Object.entries(last.byType).map(([t, n]) => html`<tr><td>${t}</td><td>${n}</td></tr>`)}</tbody></table>`
    }
  </section>`;
}
