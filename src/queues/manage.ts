// Queue management: create / configure, settings and counts, delete, list, peek, redrive, purge.
import type { Idempotency } from '../engine/idempotent';
import { scanMasters } from '../redis/scan';
import type { Store } from '../redis/store';
import { callQueue, list, parsed } from './calls';
import { shown } from './messages';
import { DEFAULTS, fromFields, type QueueSettings, toFields } from './settings';

export async function configure(
  store: Store,
  name: string,
  given: Partial<QueueSettings>,
  idem?: Idempotency,
): Promise<{ created: boolean; settings: ReturnType<typeof fromFields> }> {
  // The defaults apply only to a new queue; the settings given, to either.
  const defaults = toFields(DEFAULTS);
  const args = [defaults.length, ...defaults, ...toFields(given)];
  const r = parsed<{ created: boolean; settings: string[] }>(
    await callQueue(store, name, 'queueConfigure', args, idem),
  );
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

/** True when there was such a queue (queue-delete-1.lua answers 0, not 'missing', for none: DELETE is idempotent). */
export async function remove(store: Store, name: string, idem?: Idempotency): Promise<boolean> {
  return (await callQueue(store, name, 'queueDelete', [], idem)) === 1;
}

/** SCAN calls (COUNT 1000) one listing makes at most per master: bounded work on a large keyspace. */
export const MAX_LIST_SCANS = 50;

/**
 * The names of the queues starting with `start`, sorted, at most `limit`: a SCAN of every master, of at most
 * MAX_LIST_SCANS calls each; `complete` is false when a walk stopped before its end (a large keyspace).
 */
export async function names(
  store: Store,
  start: string,
  limit: number,
): Promise<{ names: string[]; complete: boolean }> {
  const pattern = store.keyspace.queuePattern(start);
  const found = new Set<string>();
  const take = (keys: string[]) => {
    for (const key of keys) found.add(store.keyspace.queueName(key));
    return found.size < limit;
  };
  const complete = await scanMasters(store.redis, pattern, 1000, MAX_LIST_SCANS, take);
  // The last SCAN reply may carry past the limit: cut, the list is not the whole.
  return { names: [...found].sort().slice(0, limit), complete: complete && found.size <= limit };
}

export type PeekState = 'ready' | 'delayed' | 'in_flight' | 'dead';

export async function peek(store: Store, name: string, state: PeekState, limit: number) {
  const reply = await callQueue(store, name, 'queuePeek', [state, limit]);
  return list(parsed<Parameters<typeof shown>[0][]>(reply)).map((m) => shown(m));
}

export async function redrive(
  store: Store,
  name: string,
  ids: string[] | undefined,
  limit: number,
  idem?: Idempotency,
) {
  const reply = await callQueue(store, name, 'queueRedrive', [ids ? JSON.stringify(ids) : '', limit], idem);
  const r = parsed<{ redriven: number; ids: string[] | Record<string, never> }>(reply);
  return { redriven: r.redriven, ids: list(r.ids) };
}

export async function purge(
  store: Store,
  name: string,
  what: 'all' | 'dead',
  idem?: Idempotency,
): Promise<number> {
  return Number(await callQueue(store, name, 'queuePurge', [what], idem));
}
