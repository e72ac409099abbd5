// A receive: up to N deliveries, and the long poll that waits for one (poller.ts) when there is none yet.
import { hostname } from 'node:os';
import type { Store } from '../redis/store';
import { callQueue, list, parsed } from './calls';
import { shown, type View } from './messages';
import type { QueuePoller } from './poller';

export interface ReceiveInput {
  max_messages?: number;
  wait?: number;
  visibility_timeout?: number;
}

/** This process's consumer name in the queues' consumer group. */
const CONSUMER = `${hostname()}-${process.pid}`;

interface Received {
  messages: View[] | Record<string, never>;
  due: number;
  last: string;
  now: number;
}

/**
 * Up to `max_messages` deliveries; with `wait`, a long poll: while none is there, the request sleeps on the queue's
 * shared blocking read (poller.ts), counted against the client's waiter cap (`admit`).
 */
export async function receive(
  store: Store,
  name: string,
  input: ReceiveInput,
  poll: { poller?: QueuePoller; admit: () => () => void; signal: AbortSignal },
): Promise<Record<string, unknown>[]> {
  const deadline = Date.now() + (input.wait ?? 0) * 1000;
  const lease = Math.round((input.visibility_timeout ?? 0) * 1000);
  let release: (() => void) | undefined;
  try {
    for (;;) {
      const args = [input.max_messages ?? 1, lease, CONSUMER];
      const r = parsed<Received>(await callQueue(store, name, 'queueReceive', args));
      const messages = list(r.messages);
      if (messages.length > 0 || Date.now() >= deadline || poll.signal.aborted || !poll.poller)
        return messages.map((m) => shown(m, true));
      release ??= poll.admit();
      const dueInMs = r.due === 0 ? Number.POSITIVE_INFINITY : Math.max(0, r.due - r.now);
      const why = await poll.poller.wait(name, { last: r.last, dueInMs, deadline, signal: poll.signal });
      // The wait ran out with the queue idle: nothing to run again (an idle long poll costs one script call).
      if (why === 'left' || (why === 'timer' && Date.now() >= deadline)) return [];
    }
  } finally {
    release?.();
  }
}
