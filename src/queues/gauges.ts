// The queue gauges' reading: the counts of the first queues (by name) at each scrape of /store/admin/metrics.
import type { Metrics, QueueCounts } from '../observability/metrics';
import type { Store } from '../redis/store';
import { describe, names } from './manage';

/** At most this many queues are reported (a Redis call each per scrape). */
export const GAUGED_QUEUES = 100;
/** How long the list of queues (a bounded SCAN) is reused between scrapes. */
const NAMES_TTL_MS = 30_000;

export function watchQueues(metrics: Metrics, store: Store): void {
  let cached: { names: string[]; at: number } | undefined;
  metrics.watchQueues(async (): Promise<QueueCounts[]> => {
    if (!cached || Date.now() - cached.at > NAMES_TTL_MS)
      cached = { names: (await names(store, '', GAUGED_QUEUES)).names, at: Date.now() };
    const queues = cached.names;
    const rows = await Promise.all(
      queues.map(async (queue) => {
        const { stats } = await describe(store, queue).catch(() => ({ stats: undefined }));
        if (!stats) return undefined;
        const { oldest_ready_age, ...states } = stats;
        return { queue, states, oldestReadyAge: oldest_ready_age ?? 0 };
      }),
    );
    return rows.filter((r) => r !== undefined);
  });
}
