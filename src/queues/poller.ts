// Long polls of queue receives: one blocking XREAD per queue and process, shared by every request waiting on it.
import type { Store } from '../redis/store';
import type { WaiterPool } from '../redis/waiters';

/** What one waiting receive knows from its last receive script call (queue-receive-1.lua). */
export interface WaitFor {
  /** The stream's last entry id then: a send after it wakes the waiter. */
  readonly last: string;
  /** Milliseconds from now until a delay or a lease ends (Infinity: none), when the receive may find one. */
  readonly dueInMs: number;
  /** Date.now() when the receive's wait ends. */
  readonly deadline: number;
  readonly signal: AbortSignal;
}

/** Without a connection for the blocking read, how soon waiters look again. */
const RETRY_MS = 1000;

/** Why a wait ended: a send (or a retry after a failure), its own timer (a delay, a lease, its deadline), the client left. */
export type Woken = 'send' | 'timer' | 'left';

interface Waiter {
  readonly deadline: number;
  readonly wake: () => void;
}

interface Watch {
  readonly waiters: Set<Waiter>;
  last: string;
}

/**
 * A waiting receive costs Redis nothing while its queue is idle: it sleeps on a timer until the next delay or lease
 * ends, and on the queue's one blocking `XREAD ... STREAMS <stream> <last id>` (a read of the stream, not of the
 * consumer group: it delivers nothing) until a send adds an entry. Then every waiter of that queue wakes and runs
 * its receive script again. The XREAD runs on a connection of the waiter pool (redis/waiters.ts).
 */
export class QueuePoller {
  private readonly watches = new Map<string, Watch>();

  constructor(
    private readonly store: Store,
    private readonly pool: WaiterPool,
    /** The longest one XREAD blocks (the pool's connections time out a little after SVC_LIST_MAX_WAIT). */
    private readonly maxBlockMs: number,
  ) {}

  /** Resolves when `name` may have a message for the caller, the wait's deadline passed, or the caller left. */
  wait(name: string, w: WaitFor): Promise<Woken> {
    return new Promise<Woken>((resolve) => {
      const stream = this.store.keyspace.queueStream(name);
      let watch = this.watches.get(stream);
      const fresh = !watch;
      watch ??= { waiters: new Set(), last: w.last };
      watch.last = w.last;
      const waiter: Waiter = { deadline: w.deadline, wake: () => done('send') };
      const timer = setTimeout(
        () => done('timer'),
        Math.max(0, Math.min(w.deadline - Date.now(), w.dueInMs)),
      );
      const left = () => done('left');
      const done = (why: Woken) => {
        clearTimeout(timer);
        w.signal.removeEventListener('abort', left);
        watch.waiters.delete(waiter);
        resolve(why);
      };
      w.signal.addEventListener('abort', left, { once: true });
      watch.waiters.add(waiter);
      if (fresh) {
        this.watches.set(stream, watch);
        void this.run(stream, watch);
      }
    });
  }

  /** Blocks on the stream while anyone waits on it; a new entry (or a failure) wakes every waiter. */
  private async run(stream: string, watch: Watch): Promise<void> {
    const owner = `#queue ${stream}`;
    try {
      const conn = await this.pool.acquire(owner);
      let reusable = false;
      try {
        while (watch.waiters.size > 0) {
          const latest = Math.max(...[...watch.waiters].map((x) => x.deadline));
          const block = Math.max(1, Math.min(latest - Date.now(), this.maxBlockMs));
          const reply = await conn.xread('COUNT', 1, 'BLOCK', block, 'STREAMS', stream, watch.last);
          if (reply) for (const waiter of [...watch.waiters]) waiter.wake();
        }
        reusable = true;
      } finally {
        this.pool.release(conn, reusable, owner);
      }
    } catch {
      // No connection (all in use, Redis away): the waiters run their receive again a second later (a poll).
      const waiters = [...watch.waiters];
      setTimeout(() => {
        for (const waiter of waiters) waiter.wake();
      }, RETRY_MS).unref();
      watch.waiters.clear();
    } finally {
      this.watches.delete(stream);
      // A waiter that came while the last XREAD was ending starts the next watch.
      if (watch.waiters.size > 0) {
        const next = { waiters: watch.waiters, last: watch.last };
        this.watches.set(stream, next);
        void this.run(stream, next);
      }
    }
  }
}
