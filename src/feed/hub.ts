// The one reader of the change feed per process: a blocking XREAD loop on its own connection, fanned out to all.
import { ApiError, REDIS_RETRY_AFTER } from '../errors';
import type { Metrics } from '../observability/metrics';
import type { RedisClient } from '../redis/client';
import { type ChangeEvent, eventsOf, type StreamEntry } from './event';
import type { Subscriber } from './subscriber';

/** How long one XREAD blocks: a close or a lost connection is noticed within this. */
export const BLOCK_MS = 5_000;
/** Entries per XREAD: a burst is fanned out in slices of this many. */
const READ_COUNT = 1_000;
/**
 * After a read that found events, the pause before the next one, so that the events of the next few milliseconds
 * reach each subscriber in one write (one syscall per subscriber per slice, not per event). The first event after
 * a quiet spell is not delayed: the blocking XREAD answers it at once.
 */
const GATHER_MS = 20;
/** The pause before the next attempt when Redis does not answer (the connection reconnects meanwhile). */
const RETRY_MS = 500;

/** How often the reader looks for new streams (a Cluster's topology changing). */
const DISCOVER_MS = 1_000;

/** How long the first subscriber waits for the reader to learn where the stream ends before it is refused (503). */
const POSITION_WAIT_MS = 5_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface HubLimits {
  readonly maxSubscribers: number;
  readonly maxSubscribersPerClient: number;
}

/**
 * Reads each stream from where it last stopped (an id, so a reconnect or a Sentinel failover loses nothing the new
 * primary has) and hands each slice of events to every subscriber. It starts with the first subscriber. On a Redis
 * Cluster there is a stream per master, each read by a blocking XREAD of its own (the reader's connection to that
 * master carries it; two streams on one master take turns, which delays, never loses).
 */
export class Hub {
  private readonly subscribers = new Set<Subscriber>();
  /** Subscribers per client (Owner.client): no one client holds every place. */
  private readonly perClient = new Map<string, number>();
  /** Per stream, the id it was last read up to. */
  private readonly last = new Map<string, string>();
  /** One read loop per stream. */
  private readonly loops = new Map<string, Promise<void>>();
  private running: Promise<void> | undefined;
  private closed = false;
  private markPositioned: (value: true) => void = () => {};
  /** Resolves once `last` is known for the streams there were at the start. */
  private readonly positioned = new Promise<true>((resolve) => {
    this.markPositioned = resolve;
  });
  private isPositioned = false;
  /** When `discover` last looked at the streams. */
  private discovered = 0;
  private refreshing = false;

  constructor(
    private readonly reader: RedisClient,
    /** The streams to read: one, or on a Redis Cluster one per master (it may grow: see `discover`). */
    private readonly streams: () => readonly string[],
    private readonly limits: () => HubLimits,
    private readonly metrics: Metrics,
    /** On a Cluster: looks for streams left by an earlier topology (ClusterStreams.refresh). */
    private readonly refresh?: () => Promise<void>,
  ) {}

  get size(): number {
    return this.subscribers.size;
  }

  /**
   * 503 when the service is closing or SVC_CHANGES_MAX_SUBSCRIBERS are already here; 429 when `client` already
   * holds SVC_CHANGES_MAX_SUBSCRIBERS_PER_CLIENT of them.
   */
  checkRoom(client?: string): void {
    if (this.closed) throw unavailable('the service is shutting down');
    const { maxSubscribers, maxSubscribersPerClient } = this.limits();
    if (this.subscribers.size >= maxSubscribers)
      throw unavailable(`this instance already serves ${maxSubscribers} subscribers`);
    if (client !== undefined && (this.perClient.get(client) ?? 0) >= maxSubscribersPerClient)
      throw new ApiError(
        'rate_limit_exceeded',
        `This client already follows the change feed ${maxSubscribersPerClient} times on this instance ` +
          '(SVC_CHANGES_MAX_SUBSCRIBERS_PER_CLIENT): close one first',
        { retryAfter: REDIS_RETRY_AFTER },
      );
  }

  /** Drops every subscriber whose owner `refused` names, telling it `reason` (credentials removed by a reload). */
  dropWhere(refused: (owner: NonNullable<Subscriber['filter']['owner']>) => boolean, reason: string): number {
    let dropped = 0;
    for (const s of [...this.subscribers]) {
      const { owner } = s.filter;
      if (owner && refused(owner)) {
        s.drop(reason);
        dropped++;
      }
    }
    return dropped;
  }

  /**
   * Adds a subscriber (503 when there is no room: see checkRoom); resolves to its removal once the reader knows
   * where it reads from, so that what the subscriber reads next as its backlog and what the reader hands it meet
   * without a gap (only the first subscriber waits: the reader keeps its position from then on).
   */
  async subscribe(subscriber: Subscriber): Promise<() => void> {
    const { owner } = subscriber.filter;
    this.checkRoom(owner?.client);
    this.subscribers.add(subscriber);
    this.metrics.feedSubscribers(subscriber.transport, 1);
    if (owner) this.perClient.set(owner.client, (this.perClient.get(owner.client) ?? 0) + 1);
    const expiry = expiryTimer(subscriber);
    const remove = () => {
      if (!this.subscribers.delete(subscriber)) return;
      clearTimeout(expiry);
      this.metrics.feedSubscribers(subscriber.transport, -1);
      if (!owner) return;
      const left = (this.perClient.get(owner.client) ?? 1) - 1;
      if (left > 0) this.perClient.set(owner.client, left);
      else this.perClient.delete(owner.client);
    };
    this.running ??= this.start();
    if (!this.isPositioned) {
      // A timer cleared once positioned: left running, it would hold the process (and a test run) for its length.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), POSITION_WAIT_MS);
      });
      const positioned = await Promise.race([this.positioned, late]);
      clearTimeout(timer);
      if (!positioned) {
        remove();
        throw unavailable('its reader cannot reach Redis');
      }
    }
    return remove;
  }

  /** Stops reading and drops every subscriber with `reason`. */
  async close(reason = 'the service is shutting down'): Promise<void> {
    this.closed = true;
    for (const s of [...this.subscribers]) s.drop(reason);
    this.subscribers.clear();
    // The XREAD in flight would hold a QUIT for up to BLOCK_MS.
    this.reader.disconnect();
    await this.running;
    await Promise.all(this.loops.values());
  }

  /** Learns where each stream ends now, then reads each in a loop of its own. */
  private async start(): Promise<void> {
    await this.reader.connect().catch(() => {});
    while (!this.closed && !this.isPositioned) {
      try {
        await this.refresh?.();
        const streams = this.streams();
        // A Cluster client without its slot map yet: no stream known, nothing to position.
        if (streams.length === 0) throw new Error('no stream known yet');
        const ends = await Promise.all(streams.map((stream) => this.lastId(stream)));
        streams.forEach((stream, i) => {
          this.last.set(stream, ends[i] as string);
        });
        this.isPositioned = true;
        this.markPositioned(true);
      } catch {
        if (!this.closed) await sleep(RETRY_MS);
      }
    }
    this.discover();
  }

  /**
   * Starts a loop for each stream not read yet. One that appears after the start (a Cluster master added, or one
   * that now owns a lower slot) is new: read from its beginning.
   */
  private discover(): void {
    if (this.closed || Date.now() - this.discovered < DISCOVER_MS) return;
    this.discovered = Date.now();
    if (this.refresh && !this.refreshing) {
      // In the background: what it finds is read from the next call on.
      this.refreshing = true;
      void this.refresh()
        .catch(() => {})
        .finally(() => {
          this.refreshing = false;
        });
    }
    for (const stream of this.streams()) {
      if (this.loops.has(stream)) continue;
      if (!this.last.has(stream)) this.last.set(stream, '0-0');
      this.loops.set(stream, this.loop(stream));
    }
  }

  private async loop(stream: string): Promise<void> {
    while (!this.closed) {
      try {
        const reply = (await this.reader.xread(
          'COUNT',
          READ_COUNT,
          'BLOCK',
          BLOCK_MS,
          'STREAMS',
          stream,
          this.last.get(stream) as string,
        )) as [string, StreamEntry[]][] | null;
        const entries = reply?.[0]?.[1] ?? [];
        if (entries.length > 0) {
          this.last.set(stream, (entries[entries.length - 1] as StreamEntry)[0]);
          this.fanOut(eventsOf(stream, entries));
          if (entries.length < READ_COUNT && this.subscribers.size > 1) await sleep(GATHER_MS);
        }
      } catch {
        if (!this.closed) await sleep(RETRY_MS);
      }
      this.discover();
    }
  }

  private fanOut(events: ChangeEvent[]): void {
    for (const subscriber of this.subscribers) subscriber.receive(events);
  }

  /** The id the stream ends at now ('0-0' when it does not exist yet): reading starts after it. */
  private async lastId(stream: string): Promise<string> {
    const [last] = (await this.reader.xrevrange(stream, '+', '-', 'COUNT', 1)) as StreamEntry[];
    return last?.[0] ?? '0-0';
  }
}

/** setTimeout's longest delay (about 24.8 days); a token that lives longer is not watched. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A JWT subscriber is dropped when its token's `exp` passes, as its next request would be refused. */
function expiryTimer(subscriber: Subscriber): NodeJS.Timeout | undefined {
  const expiresAt = subscriber.filter.owner?.principal?.expiresAt;
  if (expiresAt === undefined) return undefined;
  const ms = expiresAt - Date.now();
  if (ms > MAX_TIMER_MS) return undefined;
  // Dropped when the timer fires, without checking Date.now() again: timers count from libuv's cached loop time,
  // so a busy loop can fire one a few ms before Date.now() reaches `expiresAt`, and a check then left the stream
  // open for good (tests/fair-shares.test.ts timed out that way under load).
  const timer: NodeJS.Timeout = setTimeout(
    () => subscriber.drop('the JWT expired: reconnect with a new token and resume'),
    Math.max(0, ms),
  );
  timer.unref();
  return timer;
}

function unavailable(why: string): ApiError {
  return new ApiError('service_unavailable', `The change feed is not available: ${why}`, {
    retryAfter: REDIS_RETRY_AFTER,
  });
}
