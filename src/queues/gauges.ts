// The queue gauges' reading: the counts of the first queues (by name) at each scrape of /store/admin/metrics.
import type { Metrics, QueueCounts } from '../observability/metrics';
import type { Store } from '../redis/store';
import { describe, names } from './manage';

/** At most this many queues are reported (a Redis call each per scrape). */
export const GAUGED_QUEUES = 100;

export function watchQueues(metrics: Metrics, store: Store): void {
  metrics.watchQueues(async (): Promise<QueueCounts[]> => {
    const queues = await names(store, '', GAUGED_QUEUES);
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
