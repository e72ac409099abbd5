// One follower of the feed (an SSE stream, a WebSocket, a long-poll): its filter, backlog-then-live order, its buffer.
import type { ChangeEvent } from './event';
import { compareIds } from './event';

/** Which events a subscriber wants: keys under `prefix` (a tenant's own prefix included), of `type` if given. */
export interface Filter {
  readonly prefix: string;
  readonly type?: string;
}

/** A flush concerns every key: every subscriber gets it, whatever its prefix or type. */
export function matches(filter: Filter, event: ChangeEvent): boolean {
  if (event.op === 'flush') return true;
  return event.key.startsWith(filter.prefix) && (filter.type === undefined || event.type === filter.type);
}

/** Where a subscriber's events go: `send` calls `done` once the transport has written the event out. */
export interface Sink {
  readonly transport: 'sse' | 'websocket' | 'poll';
  send(event: ChangeEvent, done: () => void): void;
  /** The resume point is beyond the retention: the client must re-read its keys; the feed goes on from `next`. */
  reset(since: string, next: string): void;
  /** Ends the subscription for `reason` (a slow client, a shutdown); the client resumes by id. */
  drop(reason: string): void;
}

/**
 * Gets live events from the hub as soon as it subscribes, holds them while the backlog (XRANGE from the resume
 * point) is sent, then sends only what comes after the last event sent: no gap, no duplicate. Events sent but not
 * yet written out count against `buffer`: a client that falls that far behind is dropped.
 */
export class Subscriber {
  private held: ChangeEvent[] | undefined = [];
  private unwritten = 0;
  private dropped = false;

  constructor(
    readonly filter: Filter,
    private readonly sink: Sink,
    private readonly buffer: number,
    /** Told of each event sent and of a drop (metrics). */
    private readonly count: { delivered(): void; dropped(): void },
    /** The id of the last event the client has (or '0-0'): only later ones are sent. */
    private after = '0-0',
  ) {}

  /** Nothing up to `id` is sent: the resume point, or the stream's end when following from now. */
  skipTo(id: string): void {
    if (compareIds(id, this.after) > 0) this.after = id;
  }

  get transport(): Sink['transport'] {
    return this.sink.transport;
  }

  /** The id of the last event sent (or of the resume point). */
  get position(): string {
    return this.after;
  }

  /** From the hub: live events, in stream order. */
  receive(events: readonly ChangeEvent[]): void {
    for (const event of events) {
      if (this.dropped) return;
      if (!this.held) this.send(event);
      else if (this.held.length < this.buffer) this.held.push(event);
      else this.drop(`more than ${this.buffer} events arrived while the backlog was sent`);
    }
  }

  /** The backlog, in stream order, page by page; then `live()`. */
  backlog(events: readonly ChangeEvent[]): void {
    for (const event of events) this.send(event);
  }

  /** The backlog is sent: the held live events after it go out, and from now on events go out as they come. */
  live(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const event of held) this.send(event);
  }

  drop(reason: string): void {
    if (this.dropped) return;
    this.dropped = true;
    this.count.dropped();
    this.sink.drop(reason);
  }

  get isDropped(): boolean {
    return this.dropped;
  }

  private send(event: ChangeEvent): void {
    if (this.dropped || compareIds(event.id, this.after) <= 0) return;
    this.after = event.id;
    if (!matches(this.filter, event)) return;
    if (this.unwritten >= this.buffer) {
      this.drop(
        `the client fell more than ${this.buffer} events behind; resume from the last event it received`,
      );
      return;
    }
    this.unwritten++;
    this.count.delivered();
    this.sink.send(event, () => {
      this.unwritten--;
    });
  }
}
