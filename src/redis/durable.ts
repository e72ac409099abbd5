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
  /** Date.now() after which a write not yet sent is refused instead (Redis is not keeping up). */
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

  /** One round at most: the writes, then a WAIT that returns after `waitTimeoutMs` at the latest. */
  private get roundMs(): number {
    return this.commandTimeoutMs + this.waitTimeoutMs;
  }

  /** The longest a caller waits for send(): the round in flight when it came, then its own. */
  get deadlineMs(): number {
    return this.commandTimeoutMs + 2 * this.waitTimeoutMs;
  }

  /** Queues one write (an ioredis method of the connection and its arguments) for the next round. */
  send(slot: number, name: string, args: unknown[]): Promise<DurableReply> {
    return new Promise<DurableReply>((resolve, reject) => {
      const item = { name, args, expires: Date.now() + this.roundMs, resolve, reject };
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
    const groups: Pending[][] = [];
    for (const items of this.pending.values()) {
      const live = items.filter((item) => item.expires > now);
      for (const item of items) if (item.expires <= now) item.reject(new Error('Command timed out'));
      if (live.length > 0) groups.push(live);
    }
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
      wait.setTimeout(this.roundMs);
      pipeline.sendCommand(wait);
      // A pipeline without MULTI answers every command, in order (null is for an aborted transaction).
      const replies = (await pipeline.exec()) as Reply[];
      const [waitError, confirmedBy] = replies[items.length] as Reply;
      const confirmed = !waitError && Number(confirmedBy) >= this.replicas;
      items.forEach((item, i) => {
        item.resolve({ reply: replies[i] as Reply, confirmed });
      });
    } catch (err) {
      for (const item of items) item.reject(err as Error);
    }
  }
}
