// Queue management: create / configure, settings and counts, delete, list, peek, redrive, purge.
import { masterNodes } from '../redis/client';
import type { Store } from '../redis/store';
import { callQueue, list, parsed } from './calls';
import { shown } from './messages';
import { fromFields, type QueueSettings, toFields } from './settings';

export async function configure(
  store: Store,
  name: string,
  given: Partial<QueueSettings>,
): Promise<{ created: boolean; settings: ReturnType<typeof fromFields> }> {
  // A new queue gets every setting (defaults for those not given): create first, else change only those given.
  const created = await callQueue(store, name, 'queueConfigure', ['create', ...toFields(given, true)]);
  const reply =
    created === 'exists'
      ? await callQueue(store, name, 'queueConfigure', ['put', ...toFields(given)])
      : created;
  const r = parsed<{ created: boolean; settings: string[] }>(reply);
  return { created: r.created, settings: fromFields(r.settings) };
}

export interface Stats {
  ready: number;
  in_flight: number;
  delayed: number;
  waiting: number;
  dead: number;
  oldest_ready_age: number | null;
}

export async function describe(
  store: Store,
  name: string,
): Promise<{ settings: ReturnType<typeof fromFields>; stats: Stats }> {
  const r = parsed<
    Omit<Stats, 'oldest_ready_age'> & { settings: string[]; oldest_ready_at: number | null; now: number }
  >(await callQueue(store, name, 'queueStats', []));
  const { settings, oldest_ready_at, now, ...counts } = r;
  const age = oldest_ready_at === null ? null : Math.max(0, now - oldest_ready_at) / 1000;
  return { settings: fromFields(settings), stats: { ...counts, oldest_ready_age: age } };
}

export async function remove(store: Store, name: string): Promise<boolean> {
  return (
    (await callQueue(store, name, 'queueDelete', []).catch((err: { type?: string }) => {
      if (err.type === 'not_found') return 0;
      throw err;
    })) === 1
  );
}

/** The names of the queues starting with `start`, sorted: SCAN over every master, at most `limit`. */
export async function names(store: Store, start: string, limit: number): Promise<string[]> {
  const pattern = store.keyspace.queuePattern(start);
  const found = new Set<string>();
  for (const node of masterNodes(store.redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      for (const key of keys) found.add(store.keyspace.queueName(key));
      cursor = next;
    } while (cursor !== '0' && found.size < limit);
  }
  return [...found].sort().slice(0, limit);
}

export type PeekState = 'ready' | 'delayed' | 'in_flight' | 'dead';

export async function peek(store: Store, name: string, state: PeekState, limit: number) {
  const reply = await callQueue(store, name, 'queuePeek', [state, limit]);
  return list(parsed<Parameters<typeof shown>[0][]>(reply)).map((m) => shown(m));
}

export async function redrive(store: Store, name: string, ids: string[] | undefined, limit: number) {
  const reply = await callQueue(store, name, 'queueRedrive', [ids ? JSON.stringify(ids) : '', limit]);
  const r = parsed<{ redriven: number; ids: string[] | Record<string, never> }>(reply);
  return { redriven: r.redriven, ids: list(r.ids) };
}

export async function purge(store: Store, name: string, what: 'all' | 'dead'): Promise<number> {
  return Number(await callQueue(store, name, 'queuePurge', [what]));
}
