// One follower of the feed (an SSE stream, a WebSocket, a long-poll): its filter, backlog-then-live order, its buffer.
import type { Principal } from '../http/auth/principal';
import { advance, type Position } from './cursor';
import type { ChangeEvent } from './event';
import { compareIds } from './event';

/** Who follows the feed: the client it counts against (a per-client cap) and the principal it was let in as. */
export interface Owner {
  /** The credential (`api_key:ci`), or without one the client's address (an IPv6 network). */
  readonly client: string;
  readonly principal?: Principal;
}

/**
 * Which events a subscriber wants: keys under `prefix` (a tenant's own prefix included), of `type` if given; and
 * whose subscription it is (`owner`, not a filter of events).
 */
export interface Filter {
  readonly prefix: string;
  readonly type?: string;
  readonly owner?: Owner;
}

/** A flush concerns every key: every subscriber gets it, whatever its prefix or type. */
export function matches(filter: Filter, event: ChangeEvent): boolean {
  if (event.op === 'flush') return true;
  return event.key.startsWith(filter.prefix) && (filter.type === undefined || event.type === filter.type);
}

/** Where a subscriber's events go. */
export interface Sink {
  readonly transport: 'sse' | 'websocket' | 'poll';
  /**
   * Writes one event; false when the transport's own buffer is full (the client reads slower than events come):
   * then nothing more is written until the sink calls `drained`.
   */
  send(event: ChangeEvent, drained: () => void, cursor?: string): boolean;
  /** The resume point is beyond the retention: the client must re-read its keys; the feed goes on from `next`. */
  reset(since: string, next: string): void;
  /** Ends the subscription for `reason` (a slow client, a shutdown); the client resumes by id. */
  drop(reason: string): void;
}

/**
 * Gets live events from the hub as soon as it subscribes, queues them while the backlog (XRANGE from the resume
 * point) is sent, then sends only what comes after the last event sent: no gap, no duplicate. While the transport
 * is full, live events queue too; more than `buffer` of them still queued when more come drops the client (it
 * resumes by id). At most `buffer` plus one XREAD's worth of events are queued per subscriber.
 */
export class Subscriber {
  /** Live events not sent yet (catching up, or the transport full). */
  private readonly queue: ChangeEvent[] = [];
  /** The rest of a backlog page the transport had no room for: sent before anything else. */
  private rest: ChangeEvent[] = [];
  private catchingUp = true;
  private full = false;
  private dropped = false;
  private waiters: (() => void)[] = [];
  private readonly drained = () => {
    this.full = false;
    while (!this.full && !this.dropped && this.rest.length > 0) this.send(this.rest.shift() as ChangeEvent);
    if (!this.catchingUp) this.flush();
    if (!this.full) for (const w of this.waiters.splice(0)) w();
  };

  constructor(
    readonly filter: Filter,
    private readonly sink: Sink,
    private readonly buffer: number,
    /** Told of each event sent and of a drop (metrics). */
    private readonly count: { delivered(): void; dropped(): void },
    /**
     * On a Redis Cluster (several streams): the resume point after each event, passed to `Sink.send` as `cursor`.
     * Elsewhere the event's own id is the resume point.
     */
    private readonly cursorOf?: (position: Position) => string,
    /** Per stream, the id of the last event the client has (none: '0-0'): only later ones are sent. */
    private readonly after: Position = new Map(),
  ) {}

  get transport(): Sink['transport'] {
    return this.sink.transport;
  }

  /** Per stream, the id of the last event sent or skipped (or of the resume point): a copy. */
  get position(): Position {
    return new Map(this.after);
  }

  get isDropped(): boolean {
    return this.dropped;
  }

  /** Nothing up to `position` is sent: the resume point, or the streams' ends when following from now. */
  skipTo(position: Position): void {
    advance(this.after, position);
  }

  /**
   * From the hub: live events, in stream order (a slice of up to one XREAD's worth). A slice is always taken (a
   * batch write is a burst that a healthy client reads at once); a client that still had more than `buffer` events
   * queued when the next slice came is too slow: dropped.
   */
  receive(events: readonly ChangeEvent[]): void {
    if (this.dropped) return;
    if (this.queue.length > this.buffer) {
      const why = this.catchingUp ? 'while its backlog was sent' : 'as it read slower than events came';
      this.drop(
        `more than ${this.buffer} events waited for this client ${why}; resume from the last event received`,
      );
      return;
    }
    let i = 0;
    if (!this.catchingUp) while (!this.full && i < events.length) this.send(events[i++] as ChangeEvent);
    for (; i < events.length; i++) this.queue.push(events[i] as ChangeEvent);
  }

  /** One page of the backlog, in stream order; resolves once the transport has room for more. */
  backlog(events: readonly ChangeEvent[]): Promise<void> {
    for (let i = 0; i < events.length && !this.dropped; i++) {
      if (this.full) {
        this.rest = events.slice(i);
        break;
      }
      this.send(events[i] as ChangeEvent);
    }
    if (!this.full || this.dropped) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The backlog is sent: the queued live events after it go out, and from now on events go out as they come. */
  live(): void {
    this.catchingUp = false;
    this.flush();
  }

  drop(reason: string): void {
    if (this.dropped) return;
    this.dropped = true;
    this.queue.length = 0;
    for (const w of this.waiters.splice(0)) w();
    this.count.dropped();
    this.sink.drop(reason);
  }

  private flush(): void {
    while (!this.full && !this.dropped && this.queue.length > 0) this.send(this.queue.shift() as ChangeEvent);
  }

  private send(event: ChangeEvent): void {
    const stream = event.stream as string;
    if (compareIds(event.id, this.after.get(stream) ?? '0-0') <= 0) return;
    this.after.set(stream, event.id);
    if (!matches(this.filter, event)) return;
    this.count.delivered();
    const cursor = this.cursorOf?.(this.after);
    if (!this.sink.send(event, this.drained, cursor)) this.full = true;
  }
}
