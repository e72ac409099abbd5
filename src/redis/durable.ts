// Writes confirmed by replicas (SVC_REDIS_WAIT_REPLICAS): each round sends the waiting writes, then one WAIT.
import { Command } from 'ioredis';
import type { RedisClient, Reply } from './client';

/** What became of a write sent through the writer. */
export interface DurableReply {
  readonly reply: Reply;
  /** True when WAIT saw enough replicas confirm it (and every write sent before it on this connection). */
  readonly confirmed: boolean;
}

interface Pending {
  readonly name: string;
  readonly args: unknown[];
  /** Date.now() after which the request has been answered (503): the write is then dropped, not sent. */
  readonly expires: number;
  readonly resolve: (value: DurableReply) => void;
  readonly reject: (err: Error) => void;
}

/** The parts of an ioredis pipeline used here: its methods by name, a prepared command, exec. */
type Pipeline = Record<string, ((...args: unknown[]) => unknown) | undefined> & {
  sendCommand(command: Command): void;
  exec(): Promise<Reply[] | null>;
};

/**
 * Sends writes on a connection of their own, so that a WAIT that blocks while a replica is away holds back only
 * writes, never reads. One round is in flight at a time: one pipeline per hash slot holding every write that
 * came since the last round and one WAIT after them (WAIT covers all earlier writes of its connection), so a
 * round costs one replica round trip however many writes it carries.
 */
export class DurableWriter {
  private pending = new Map<number, Pending[]>();
  private inFlight = false;

  constructor(
    private readonly connection: RedisClient,
    readonly replicas: number,
    readonly waitTimeoutMs: number,
    /** How long a write may take to be sent and answered, on top of the WAIT. */
    private readonly commandTimeoutMs: number,
  ) {}

  /** The longest a caller waits for send(): queueing behind one round, the write, and its WAIT. */
  get deadlineMs(): number {
    return this.commandTimeoutMs + this.waitTimeoutMs;
  }

  /** Queues one write (an ioredis method of the connection and its arguments) for the next round. */
  send(slot: number, name: string, args: unknown[]): Promise<DurableReply> {
    return new Promise<DurableReply>((resolve, reject) => {
      const item = { name, args, expires: Date.now() + this.deadlineMs, resolve, reject };
      const queue = this.pending.get(slot);
      if (queue) queue.push(item);
      else this.pending.set(slot, [item]);
      if (!this.inFlight) {
        this.inFlight = true;
        setImmediate(() => this.round());
      }
    });
  }

  private round(): void {
    const now = Date.now();
    const groups = [...this.pending.values()]
      .map((items) => items.filter((item) => item.expires > now))
      .filter((items) => items.length > 0);
    this.pending = new Map();
    if (groups.length === 0) {
      this.inFlight = false;
      return;
    }
    void Promise.all(groups.map((items) => this.exec(items))).then(() => this.round());
  }

  private async exec(items: Pending[]): Promise<void> {
    try {
      const pipeline = this.connection.pipeline() as unknown as Pipeline;
      for (const item of items) {
        const method = pipeline[item.name];
        if (!method) throw new Error(`unknown Redis command ${item.name}`);
        method.apply(pipeline, item.args);
      }
      const wait = new Command('wait', [this.replicas, this.waitTimeoutMs]);
      // The first timeout set wins: ioredis's own command timeout would otherwise cut every WAIT short.
      wait.setTimeout(this.deadlineMs);
      pipeline.sendCommand(wait);
      const replies = (await pipeline.exec()) ?? [];
      const [waitError, confirmedBy] = replies[items.length] ?? [new Error('no WAIT reply'), 0];
      const confirmed = !waitError && Number(confirmedBy) >= this.replicas;
      items.forEach((item, i) => {
        item.resolve({ reply: replies[i] ?? [new Error('no reply'), null], confirmed });
      });
    } catch (err) {
      for (const item of items) item.reject(err as Error);
    }
  }
}
