// client.queues: reliable queues (docs/queues.md): send, receive with a lease, ack / nack / extend, and `messages`,
// an async iterator that acks each message when the loop body is done with it and extends its lease meanwhile.
import type { components } from './schema.js';
import { type Api, type CallOptions, unwrap, type WriteOptions, writeHeaders } from './transport.js';

export type QueueSettings = components['schemas']['QueueSettingsInput'];
export type QueueMessage = components['schemas']['Message'];
export type MessageInput = components['schemas']['MessageInput'];
export type SettleResult = components['schemas']['SettleResponse']['results'][number];
export type QueueState = 'ready' | 'delayed' | 'in_flight' | 'dead';

export interface ReceiveOptions extends CallOptions {
  /** 1 to 100; default 1. */
  max?: number;
  /** Seconds to wait for a message (long poll); default 0. */
  wait?: number;
  /** This delivery's lease in seconds; the queue's by default. */
  visibilityTimeout?: number;
}

export interface MessagesOptions extends ReceiveOptions {
  /** The lease (seconds) each delivery is extended to, every half of it, while the loop body runs; default 30. */
  visibilityTimeout?: number;
}

const at = (queue: string) => ({ params: { path: { queue } } });

export function queues(api: Api) {
  const settle = async (
    queue: string,
    what: 'ack' | 'nack' | 'extend',
    body: { receipts: string[]; delay?: number; error?: string; visibility_timeout?: number },
  ): Promise<SettleResult[]> =>
    (await unwrap(api.POST(`/store/queues/{queue}/${what}`, { ...at(queue), body }))).data.results;
  const receive = async (queue: string, options: ReceiveOptions = {}): Promise<QueueMessage[]> => {
    const { max, wait, visibilityTimeout, signal } = options;
    const body = { max_messages: max, wait, visibility_timeout: visibilityTimeout };
    return (await unwrap(api.POST('/store/queues/{queue}/receive', { ...at(queue), body, signal }))).data
      .messages;
  };
  const self = {
    /** Creates the queue (`true`) or changes the settings given (`false`). */
    async put(queue: string, settings: QueueSettings = {}): Promise<boolean> {
      return (await unwrap(api.PUT('/store/queues/{queue}', { ...at(queue), body: settings }))).data.created;
    },
    /** Settings and counts (ready, in_flight, delayed, waiting, dead, oldest_ready_age). */
    async get(queue: string) {
      return (await unwrap(api.GET('/store/queues/{queue}', at(queue)))).data;
    },
    async list(prefix?: string): Promise<string[]> {
      return (await unwrap(api.GET('/store/queues', { params: { query: { prefix } } }))).data.queues;
    },
    async delete(queue: string): Promise<boolean> {
      return (await unwrap(api.DELETE('/store/queues/{queue}', at(queue)))).data.deleted;
    },
    /** Sends one message (a string is its body) or several, all or none; answers their ids. */
    async send(queue: string, messages: string | MessageInput | MessageInput[], options: WriteOptions = {}) {
      const one = typeof messages === 'string' ? { body: messages } : messages;
      const body = Array.isArray(one) ? { messages: one } : one;
      const { data } = await unwrap(
        api.POST('/store/queues/{queue}/messages', { ...at(queue), body, headers: writeHeaders(options) }),
      );
      return 'messages' in data ? data.messages : [data];
    },
    receive,
    ack: (queue: string, receipts: string[]) => settle(queue, 'ack', { receipts }),
    /** Gives deliveries back: delivered again after `delay` seconds, or by the queue's backoff. */
    nack: (queue: string, receipts: string[], options: { delay?: number; error?: string } = {}) =>
      settle(queue, 'nack', { receipts, ...options }),
    extend: (queue: string, receipts: string[], seconds: number) =>
      settle(queue, 'extend', { receipts, visibility_timeout: seconds }),
    async peek(queue: string, state: QueueState = 'ready', limit = 10): Promise<QueueMessage[]> {
      const params = { path: { queue }, query: { state, limit } };
      return (await unwrap(api.GET('/store/queues/{queue}/messages', { params }))).data.messages;
    },
    async redrive(queue: string, options: { ids?: string[]; limit?: number } = {}) {
      return (await unwrap(api.POST('/store/queues/{queue}/redrive', { ...at(queue), body: options }))).data;
    },
    async purge(queue: string, what: 'all' | 'dead' = 'all'): Promise<number> {
      return (await unwrap(api.POST('/store/queues/{queue}/purge', { ...at(queue), body: { what } }))).data
        .purged;
    },
    /**
     * The queue's messages, one at a time, until `signal` aborts: each is acked when the loop asks for the next one,
     * and its lease extended every half `visibilityTimeout` while the body runs. Leaving the loop (`break`, `throw`)
     * gives the current message back (nack: the queue's backoff) unacked: ack it first if it was handled.
     */
    async *messages(queue: string, options: MessagesOptions = {}): AsyncGenerator<QueueMessage> {
      const lease = options.visibilityTimeout ?? 30;
      const { signal } = options;
      while (!signal?.aborted) {
        let got: QueueMessage[];
        try {
          got = await receive(queue, { max: 1, wait: options.wait ?? 20, visibilityTimeout: lease, signal });
        } catch (err) {
          if (signal?.aborted) return;
          throw err;
        }
        for (const m of got) {
          const receipt = m.receipt as string;
          const keeper = setInterval(
            () => void self.extend(queue, [receipt], lease).catch(() => {}),
            lease * 500,
          );
          let done = false;
          try {
            yield m;
            done = true;
          } finally {
            clearInterval(keeper);
            await (done
              ? self.ack(queue, [receipt])
              : self.nack(queue, [receipt], { error: 'the consumer stopped' }));
          }
        }
      }
    },
  };
  return self;
}
