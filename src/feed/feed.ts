// The change feed of one app: its hub, and the two ways to follow it (a stream of events, one long-poll page).
import type { Config } from '../config';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { RedisClient } from '../redis/client';
import type { Keyspace } from '../redis/keys';
import { currentEnd, readPage, resetError } from './backlog';
import type { ChangeEvent } from './event';
import { Expirations } from './expirations';
import { Hub } from './hub';
import { type Filter, matches, type Sink, Subscriber } from './subscriber';

/** How many backlog pages one long-poll reads at most before it answers what it found (bounded work). */
const POLL_PAGES = 10;

export interface PollRequest {
  readonly filter: Filter;
  readonly since?: string;
  readonly waitMs: number;
  readonly limit: number;
  /** Resolves when the client has gone: a waiting poll then gives its place up at once. */
  readonly gone?: Promise<void>;
}

export interface PollPage {
  readonly events: ChangeEvent[];
  readonly next: string;
}

export class Feed {
  readonly hub: Hub;
  private readonly stream: string;
  private readonly expirations?: Expirations;

  constructor(
    private readonly redis: RedisClient,
    reader: RedisClient,
    keyspace: Keyspace,
    private readonly config: () => Config,
    private readonly metrics: Metrics,
    logger: Logger,
  ) {
    this.stream = keyspace.changes;
    this.hub = new Hub(reader, this.stream, () => config().changes, metrics);
    if (config().changes.expired) {
      const stream = () => ({ key: this.stream, maxlen: config().changes.maxlen });
      this.expirations = new Expirations(redis, keyspace, stream, logger);
      this.expirations.start();
    }
  }

  private subscriber(filter: Filter, sink: Sink): Subscriber {
    const { transport } = sink;
    const delivered = this.metrics.feedDelivered(transport);
    const count = { delivered: () => delivered.inc(), dropped: () => this.metrics.feedDropped(transport) };
    return new Subscriber(filter, sink, this.config().changes.buffer, count);
  }

  /**
   * Follows the feed into `sink` from `since` (the backlog first, then live) or from now; resolves to the removal of
   * the subscription once live. Subscribed before the backlog is read, so nothing written meanwhile is missed.
   */
  async follow(filter: Filter, since: string | undefined, sink: Sink): Promise<() => void> {
    const subscriber = this.subscriber(filter, sink);
    const unsubscribe = await this.hub.subscribe(subscriber);
    try {
      if (since === undefined) subscriber.skipTo(await currentEnd(this.redis, this.stream));
      else await this.sendBacklog(subscriber, since, sink);
      subscriber.live();
      return unsubscribe;
    } catch (err) {
      unsubscribe();
      throw err;
    }
  }

  private async sendBacklog(subscriber: Subscriber, since: string, sink: Sink): Promise<void> {
    subscriber.skipTo(since);
    let position = since;
    while (!subscriber.isDropped) {
      const page = await readPage(this.redis, this.stream, position);
      if (page === 'reset') {
        const end = await currentEnd(this.redis, this.stream);
        subscriber.skipTo(end);
        sink.reset(since, end);
        return;
      }
      await subscriber.backlog(page.events);
      position = page.next;
      if (!page.more) return;
    }
  }

  /**
   * One long-poll page: the events after `since` (from now without it) that match, at most `limit`; when there are
   * none yet, waits up to `waitMs` for the first. 410 changes_reset when `since` is beyond the retention.
   */
  async poll({ filter, since, waitMs, limit, gone }: PollRequest): Promise<PollPage> {
    let position = since ?? (await currentEnd(this.redis, this.stream));
    const found: ChangeEvent[] = [];
    for (let pages = 0; pages < POLL_PAGES; pages++) {
      const page = await readPage(this.redis, this.stream, position);
      if (page === 'reset') throw resetError(position, await currentEnd(this.redis, this.stream));
      for (const event of page.events) {
        position = event.id;
        if (matches(filter, event)) found.push(event);
        if (found.length === limit) return { events: found, next: position };
      }
      position = page.next;
      if (!page.more) break;
    }
    if (found.length > 0 || waitMs === 0) return { events: found, next: position };
    return this.wait(filter, position, waitMs, limit, gone);
  }

  /** Waits for the first matching events after `position`: subscribed, then the backlog read again (no gap). */
  private wait(
    filter: Filter,
    position: string,
    waitMs: number,
    limit: number,
    gone?: Promise<void>,
  ): Promise<PollPage> {
    return new Promise<PollPage>((resolve, reject) => {
      const events: ChangeEvent[] = [];
      let timer: NodeJS.Timeout | undefined;
      let unsubscribe = () => {};
      const answer = () => {
        clearTimeout(timer);
        unsubscribe();
        const last = events[events.length - 1];
        resolve({ events, next: events.length === limit && last ? last.id : subscriber.position });
      };
      const sink: Sink = {
        transport: 'poll',
        send(event) {
          if (events.length === 0) setImmediate(answer);
          if (events.length < limit) events.push(event);
          return true;
        },
        reset: () => {},
        drop: () => answer(),
      };
      const subscriber = this.subscriber(filter, sink);
      subscriber.skipTo(position);
      const subscribed = this.hub.subscribe(subscriber).then((remove) => {
        unsubscribe = remove;
        timer = setTimeout(answer, waitMs);
        void gone?.then(answer);
      });
      // Events written between the read above and the subscription: the backlog from `position` once more.
      subscribed
        .then(() => readPage(this.redis, this.stream, position))
        .then(
          (page) => {
            if (page === 'reset') return;
            void subscriber.backlog(page.events);
            // A full page: more is there at once; answer with what it held rather than leave a gap before the live part.
            if (page.more) answer();
            else subscriber.live();
          },
          (err) => {
            clearTimeout(timer);
            unsubscribe();
            reject(err);
          },
        );
    });
  }

  close(): Promise<void> {
    this.expirations?.stop();
    return this.hub.close();
  }
}
