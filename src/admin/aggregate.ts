// Admin figures of the whole instance: this worker's own, merged with the other workers' (SVC_WORKERS > 1).
//
// With one worker (no peers) nothing is asked and the figures are this process's, as before. Otherwise
// the worker that got the admin request asks the others through the primary (peers.ts) and merges.
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { Context } from '../context';
import type { ClientRecord } from '../observability/clients';
import { type StatsPart, type StatsSnapshot, summarize } from '../observability/summary';
import type { Answerers, Topic } from '../peers';
import { connectionPool } from './redis';

type Pool = ReturnType<typeof connectionPool>;
type Metric = MetricObjectWithValues<MetricValue<string>>;

/** What this worker tells the others when they ask. */
export function answerers(ctx: Context): Answerers {
  return {
    stats: async () => ({ part: ctx.telemetry.stats.part(), pool: connectionPool(ctx.redis) }),
    metrics: () => ctx.telemetry.metrics.registry.getMetricsAsJSON(),
    clients: async () => ctx.telemetry.clients.list(),
    reload: () => ctx.reload(),
  };
}

/** The other workers' answers (values of those that succeeded); none without peers. */
async function others<T>(ctx: Context, topic: Topic): Promise<T[]> {
  const answers = (await ctx.peers?.ask(topic)) ?? [];
  return answers.flatMap((a) => (a.ok ? [a.value as T] : []));
}

/** Request statistics summed over the workers; Redis connections too (each worker has its own). */
export async function instanceStats(
  ctx: Context,
): Promise<StatsSnapshot & { database: { connection_pool: Pool } }> {
  const own = { part: ctx.telemetry.stats.part(), pool: connectionPool(ctx.redis) };
  const all = [own, ...(await others<{ part: StatsPart; pool: Pool }>(ctx, 'stats'))];
  const stats = summarize(all.map((a) => a.part));
  const pool = { active: 0, idle: 0, max: 0 };
  for (const { pool: p } of all) {
    pool.active += p.active;
    pool.idle += p.idle;
    pool.max += p.max;
  }
  return { ...stats, database: { ...stats.database, connection_pool: pool } };
}

/**
 * The Prometheus text: with several workers, prom-client's AggregatorRegistry merges their registries
 * (counters and histograms summed per label set; default metrics by their own `aggregator`).
 */
export async function instanceMetrics(ctx: Context): Promise<string> {
  if (!ctx.peers) return ctx.telemetry.metrics.text();
  const own = await ctx.telemetry.metrics.registry.getMetricsAsJSON();
  const all = [own, ...(await others<Metric[]>(ctx, 'metrics'))];
  return AggregatorRegistry.aggregate(all).metrics();
}

/**
 * The union of the workers' client lists: one client seen by several workers is one entry (first seen,
 * last seen, requests summed); most recently seen first, bounded by SVC_CLIENTS_MAX like each list.
 */
export async function instanceClients(ctx: Context): Promise<ClientRecord[]> {
  const own = ctx.telemetry.clients.list();
  if (!ctx.peers) return own;
  const byId = new Map<string, ClientRecord>();
  for (const client of [own, ...(await others<ClientRecord[]>(ctx, 'clients'))].flat()) {
    const seen = byId.get(client.id);
    if (seen === undefined) {
      byId.set(client.id, { ...client });
      continue;
    }
    // ISO timestamps of the same format order as strings.
    if (client.connected_at < seen.connected_at) seen.connected_at = client.connected_at;
    if (client.last_activity > seen.last_activity) seen.last_activity = client.last_activity;
    seen.requests_count += client.requests_count;
  }
  const latestFirst = (a: ClientRecord, b: ClientRecord) => b.last_activity.localeCompare(a.last_activity);
  return [...byId.values()].sort(latestFirst).slice(0, ctx.config.clientsMax);
}

/**
 * Reloads this worker (its failure is the request's 500, and then no other worker is asked), then the
 * others, so that the answer comes once every worker runs the new configuration. The others read the
 * same files and normally say the same; one that failed is named in the message.
 */
export async function reloadEveryWorker(ctx: Context): Promise<string> {
  const message = await ctx.reload();
  const failed = ((await ctx.peers?.ask('reload')) ?? []).flatMap((a) => (a.ok ? [] : [a.error]));
  if (failed.length === 0) return message;
  return `${message}; ${failed.length} other worker(s) did not reload: ${failed.join('; ')}`;
}
