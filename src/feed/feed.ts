// The change feed of one app: its hub, and the two ways to follow it (a stream of events, one long-poll page).
import type { Config } from '../config';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { RedisClient } from '../redis/client';
import type { ClusterStreams } from '../redis/feed-streams';
import type { Keyspace } from '../redis/keys';
import { before, currentEnds, readPage, resetError } from './backlog';
import { advance, type CursorFormat, clusterCursor, type Position, plainCursor } from './cursor';
import type { ChangeEvent } from './event';
import { Expirations } from './expirations';
import { Hub } from './hub';
import { type Filter, matches, type Sink, Subscriber } from './subscriber';

/** The milliseconds of a stream id. */
const msOf = (id: string) => Number(id.slice(0, id.indexOf('-')));

/** How many backlog pages one long-poll reads at most before it answers what it found (bounded work). */
const POLL_PAGES = 10;

export interface PollRequest {
  readonly filter: Filter;
  readonly since?: Position;
  readonly waitMs: number;
  readonly limit: number;
  /** Resolves when the client has gone: a waiting poll then gives its place up at once. */
  readonly gone?: Promise<void>;
}

export interface PollPage {
  readonly events: ChangeEvent[];
  /** The resume point after these events (a cursor: see `Feed.cursor`). */
  readonly next: string;
}

export class Feed {
  readonly hub: Hub;
  /** How resume points read and print: a plain stream id, or on a Redis Cluster an opaque cursor (cursor.ts). */
  readonly cursor: CursorFormat;
  /** The streams events are in now: the one stream, or on a Cluster one per master. */
  private readonly streams: () => readonly string[];
  private readonly expirations?: Expirations;
  private readonly clustered: boolean;

  constructor(
    private readonly redis: RedisClient,
    reader: RedisClient,
    keyspace: Keyspace,
    private readonly config: () => Config,
    private readonly metrics: Metrics,
    logger: Logger,
    /** On a Redis Cluster: the stream of each master (redis/feed-streams.ts). */
    cluster?: ClusterStreams,
  ) {
    this.clustered = cluster !== undefined;
    const single = [keyspace.changes];
    this.streams = cluster ? () => cluster.all() : () => single;
    this.cursor = cluster
      ? clusterCursor(keyspace.changesIn, (s) => cluster.tagOf(s))
      : plainCursor(keyspace.changes);
    const refresh = cluster ? () => cluster.refresh() : undefined;
    this.hub = new Hub(reader, this.streams, () => config().changes, metrics, refresh);
    // Keyspace notifications are per node: not offered on a Cluster (config.ts refuses the two together).
    if (config().changes.expired && !cluster) {
      const stream = () => ({ key: keyspace.changes, maxlen: config().changes.maxlen });
      this.expirations = new Expirations(redis, keyspace, stream, logger);
      this.expirations.start();
    }
  }

  private subscriber(filter: Filter, sink: Sink): Subscriber {
    const { transport } = sink;
    const delivered = this.metrics.feedDelivered(transport);
    const count = { delivered: () => delivered.inc(), dropped: () => this.metrics.feedDropped(transport) };
    // With one stream the event's id is its resume point: no cursor to build per event.
    const cursorOf = this.clustered ? this.cursor.format : undefined;
    return new Subscriber(filter, sink, this.config().changes.buffer, count, cursorOf);
  }

  /** The streams to read from `since`: those of now, and any other it names (a master gone since). */
  private streamsFrom(since: Position): string[] {
    const all = new Set(this.streams());
    for (const stream of since.keys()) all.add(stream);
    return [...all];
  }

  private ends(): Promise<Position> {
    return currentEnds(this.redis, this.streams());
  }

  /**
   * Follows the feed into `sink` from `since` (the backlog first, then live) or from now; resolves to the removal of
   * the subscription once live. Subscribed before the backlog is read, so nothing written meanwhile is missed.
   */
  async follow(filter: Filter, since: Position | undefined, sink: Sink): Promise<() => void> {
    const subscriber = this.subscriber(filter, sink);
    const unsubscribe = await this.hub.subscribe(subscriber);
    try {
      if (since === undefined) subscriber.skipTo(await this.ends());
      else await this.sendBacklog(subscriber, since, sink);
      subscriber.live();
      return unsubscribe;
    } catch (err) {
      unsubscribe();
      throw err;
    }
  }

  /** The backlog after `since`, stream by stream; a reset (and then from the ends) when any is beyond retention. */
  private async sendBacklog(subscriber: Subscriber, since: Position, sink: Sink): Promise<void> {
    subscriber.skipTo(since);
    for (const stream of this.streamsFrom(since)) {
      let position = since.get(stream) ?? '0-0';
      while (!subscriber.isDropped) {
        const page = await readPage(this.redis, stream, position);
        if (page === 'reset') {
          const ends = await this.ends();
          subscriber.skipTo(ends);
          sink.reset(this.cursor.format(since), this.cursor.format(subscriber.position));
          return;
        }
        await subscriber.backlog(page.events);
        position = page.next;
        if (!page.more) break;
      }
    }
  }

  /**
   * One long-poll page: the events after `since` (from now without it) that match, at most `limit`, stream by
   * stream; when there are none yet, waits up to `waitMs` for the first. 410 changes_reset when `since` is beyond
   * the retention. `next` moves only to the caller's own events or to Redis's clock, never to another tenant's
   * event: see `reported`.
   */
  async poll({ filter, since, waitMs, limit, gone }: PollRequest): Promise<PollPage> {
    const start = since ?? (await this.ends());
    /** Where reading goes on: past every event read, the others' included (never shown to the client). */
    const position: Position = new Map(start);
    /**
     * What `next` says: the resume point, moved to each event of the page and, where a stream was read to its end,
     * to just before the Redis clock of that read; so a tenant never learns when others write.
     */
    const reported: Position = new Map(start);
    const found: ChangeEvent[] = [];
    let pages = 0;
    for (const stream of this.streamsFrom(position)) {
      // Following from now, `reported` starts at the stream's end: not to be shown, the clock replaces it.
      let fromEnd = since === undefined;
      while (pages++ < POLL_PAGES) {
        const page = await readPage(this.redis, stream, position.get(stream) ?? '0-0');
        if (page === 'reset') {
          const next = new Map(position);
          advance(next, await this.ends());
          throw resetError(this.cursor.format(start), this.cursor.format(next));
        }
        for (const event of page.events) {
          position.set(stream, event.id);
          if (!matches(filter, event)) continue;
          found.push(event);
          reported.set(stream, event.id);
          fromEnd = false;
          if (found.length === limit) return { events: found, next: this.cursor.format(reported) };
        }
        position.set(stream, page.next);
        if (!page.more) {
          if (page.time === undefined) break;
          const clock = before(page.time);
          if (fromEnd) reported.set(stream, clock);
          else advance(reported, new Map([[stream, clock]]));
          break;
        }
        // Out of pages in the middle of others' events: move on to the millisecond before the last one read, so
        // that the next poll does not read the same pages again (all it tells is that others wrote much).
        if (pages >= POLL_PAGES) advance(reported, new Map([[stream, before(msOf(page.next))]]));
      }
    }
    if (found.length > 0 || waitMs === 0 || pages > POLL_PAGES)
      return { events: found, next: this.cursor.format(reported) };
    return this.wait(filter, position, reported, waitMs, limit, gone);
  }

  /**
   * Waits for the first matching events after `position`: subscribed, then the backlog read again (no gap). `next`
   * is `reported` moved to the events of the page.
   */
  private wait(
    filter: Filter,
    position: Position,
    reported: Position,
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
        for (const event of events) reported.set(event.stream as string, event.id);
        resolve({ events, next: this.cursor.format(reported) });
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
      const streams = this.streamsFrom(position);
      subscribed
        .then(() => Promise.all(streams.map((s) => readPage(this.redis, s, position.get(s) ?? '0-0'))))
        .then(
          (pages) => {
            let more = false;
            for (const page of pages) {
              if (page === 'reset') continue;
              void subscriber.backlog(page.events);
              more ||= page.more;
            }
            // A full page: more is there at once; answer with what it held rather than leave a gap before the live part.
            if (more) answer();
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
