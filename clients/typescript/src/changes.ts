// client.changes: the change feed, as long-poll pages or a subscription over a streamed fetch of Server-Sent Events
// that reconnects by itself and resumes after the last event it delivered.
import { createParser } from 'eventsource-parser';
import { GatewayError } from './errors.js';
import { sleep } from './retry.js';
import type { components } from './schema.js';
import { type Api, unwrap } from './transport.js';

export type ChangeEvent = components['schemas']['ChangeEvent'];
export type ChangesPage = components['schemas']['ChangesPage'];

export interface FeedFilter {
  /** Only keys starting with this. */
  prefix?: string;
  /** Only keys of this Redis type. */
  type?: string;
}

export interface SubscribeOptions extends FeedFilter {
  /** Start after this event id (or Cluster cursor); from now when absent. */
  since?: string;
  onEvent: (event: ChangeEvent, id: string) => void;
  /** The stream is live (again). */
  onOpen?: () => void;
  /** The resume point was older than the feed keeps: re-read what you follow; the feed goes on from `next`. */
  onReset?: (reset: { since: string; next: string; message: string }) => void;
  /** A connection failed or ended; the subscription reconnects unless the error is final (401, 403, 404). */
  onError?: (error: unknown) => void;
  /** Ends the subscription. */
  signal?: AbortSignal;
  /** The first wait before reconnecting, doubled up to 30 s (default 500 ms). */
  reconnectDelayMs?: number;
}

export interface Subscription {
  /** The id (or cursor) after which a new subscription would resume. */
  readonly lastEventId: string | undefined;
  close(): void;
  /** Settles when the subscription ends: resolves after close(), rejects on a final error. */
  readonly done: Promise<void>;
}

const FINAL = new Set([400, 401, 403, 404]);

export function changes(api: Api) {
  return {
    /** A page of events after `since`, waiting up to `wait` seconds for the first one; pass `next` on. */
    async poll(
      options: FeedFilter & { since?: string; wait?: number; limit?: number; signal?: AbortSignal } = {},
    ) {
      const { since, wait, limit, prefix, type } = options;
      const query = { since, wait, limit, prefix, type };
      const call = api.GET('/store/changes', {
        params: { query },
        headers: { Accept: 'application/json' },
        signal: options.signal,
      });
      return (await unwrap(call)).data as ChangesPage;
    },

    subscribe(options: SubscribeOptions): Subscription {
      const controller = new AbortController();
      options.signal?.addEventListener('abort', () => controller.abort(), { once: true });
      let last = options.since;
      const base = options.reconnectDelayMs ?? 500;

      const follow = async (): Promise<void> => {
        const resuming = last !== undefined && last !== options.since;
        const query = { prefix: options.prefix, type: options.type, since: resuming ? undefined : last };
        const { data } = await unwrap(
          api.GET('/store/changes', {
            params: { query },
            headers: { Accept: 'text/event-stream', ...(resuming ? { 'Last-Event-ID': last } : {}) },
            parseAs: 'stream',
            signal: controller.signal,
          }),
        );
        let opened = false;
        const parser = createParser({
          onEvent: (message) => {
            if (message.id) last = message.id;
            if (message.event === undefined) options.onEvent(JSON.parse(message.data), message.id ?? '');
            else if (message.event === 'reset') options.onReset?.(JSON.parse(message.data));
          },
        });
        const reader = (data as unknown as ReadableStream<Uint8Array>).getReader();
        const decoder = new TextDecoder();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          if (!opened) {
            opened = true;
            options.onOpen?.();
          }
          parser.feed(decoder.decode(value, { stream: true }));
        }
      };

      const done = (async () => {
        let delay = base;
        while (!controller.signal.aborted) {
          try {
            await follow();
            delay = base;
          } catch (err) {
            if (controller.signal.aborted) return;
            options.onError?.(err);
            if (err instanceof GatewayError && FINAL.has(err.status)) throw err;
            if (err instanceof GatewayError && err.retryAfter !== undefined) delay = err.retryAfter * 1000;
          }
          await sleep(delay, controller.signal).catch(() => {});
          delay = Math.min(delay * 2, 30_000);
        }
      })();
      // A final error rejects `done`; one who never awaits it must not get an unhandled rejection.
      done.catch(() => {});
      return {
        get lastEventId() {
          return last;
        },
        close: () => controller.abort(),
        done,
      };
    },
  };
}
