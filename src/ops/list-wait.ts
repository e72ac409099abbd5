// A list pop's bounded wait: when the list is empty, a blocking BLMPOP on a pooled connection of its own.
import { ApiError } from '../errors';
import type { Outcome } from './op';
import { runBlocking, type Store } from './run';

export interface WaitInput {
  key: string;
  end: 'left' | 'right';
  count: number;
  /** Seconds, > 0 (BLMPOP's 0 would wait for ever). */
  wait: number;
}

/**
 * The change event of a blocking pop, the one write that runs outside our scripts (BLMPOP cannot run in one):
 * appended right after the pop, before replicas are waited for and before the answer. The exception to "in the
 * same atomic step": if Redis fails between the two (the connection lost at that very instant), the items are
 * still answered (they are the client's now: a 503 would lose them), without their event; and a write to the list
 * by another client in between may come before it in the feed.
 */
async function popped(store: Store, key: string): Promise<void> {
  const { changes } = store;
  if (!changes) return;
  // On a Cluster, the stream of the list's master (forKey: '' before the slot map is loaded, then the pop failed).
  const stream = store.streams ? store.streams.forKey(store.keyspace.user(key)) : changes.key;
  await store.redis
    .xadd(stream, 'MAXLEN', '~', changes.maxlen, '*', 'k', key, 't', 'list', 'o', 'blmpop')
    .catch(() => {});
}

/**
 * Waits up to `wait` seconds for an item, after the normal pop (a script call, run first by runOp) found the list
 * empty. BLMPOP takes no type check: a key of another type is refused by Redis (409 wrong_type), one created
 * meanwhile is not waited on. When the client goes away, the connection is closed at once (its wait ends with it)
 * rather than handed back: an item popped at that very moment is lost with the answer, as any answer the client
 * is no longer there to read.
 */
export function blockingPop({ key, end, count, wait }: WaitInput) {
  /** `bytes`: the items as byte strings (ops/encoding.ts), read as Buffers. */
  return async (store: Store, abandoned: AbortSignal, client: string, bytes = false): Promise<Outcome> => {
    const { waiters } = store;
    if (!waiters) throw new ApiError('service_unavailable', 'Waiting pops are not available here');
    const conn = await waiters.acquire(client);
    let reusable = false;
    const leave = () => waiters.drop(conn);
    abandoned.addEventListener('abort', leave, { once: true });
    try {
      if (abandoned.aborted) throw new ApiError('service_unavailable', 'The client went away');
      const command = { name: 'BLMPOP', keys: [key], args: ['list'], buffers: bytes };
      const direction = end === 'left' ? 'LEFT' : 'RIGHT';
      const reply = await runBlocking(
        store,
        conn,
        command,
        (redisKey) => [wait, 1, redisKey, direction, 'COUNT', count],
        wait * 1000,
        () => popped(store, key),
      );
      reusable = true;
      // [key, [values...]], or null when the wait ended with the list still empty.
      if (reply === null) {
        throw new ApiError('not_found', `Key '${key}' does not exist (the list stayed empty for ${wait} s)`);
      }
      const values = (reply as [string | Buffer, (string | Buffer)[]])[1];
      const items = values.map((v) => (Buffer.isBuffer(v) ? v.toString('latin1') : v));
      return { status: 200, body: { success: true, values: items } };
    } finally {
      abandoned.removeEventListener('abort', leave);
      waiters.release(conn, reusable && !abandoned.aborted, client);
    }
  };
}
