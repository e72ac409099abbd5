// Where operations run: the Redis connections and what every call needs to know (deadline, durable writer, fence).
import type { RedisClient } from './client';
import type { DurableWriter } from './durable';
import type { Fence } from './failover-fence';
import type { ClusterStreams } from './feed-streams';
import type { Keyspace } from './keys';
import type { WaiterPool } from './waiters';

/** Where operations run, and how long Redis may take to answer them. */
export interface Store {
  readonly redis: RedisClient;
  readonly keyspace: Keyspace;
  /**
   * A call not answered within this many milliseconds of being issued fails (503). On a Cluster ioredis's own
   * command timeout starts only when the auto-pipeline that holds the command is sent, which under load is after
   * the previous pipeline's answer (or timeout): a hung Redis would take up to two timeouts to be noticed.
   */
  readonly deadlineMs: number;
  /** SVC_REDIS_MAX_ARGUMENTS: the most words of one command (0: no cap); a longer one is refused before it is sent. */
  readonly maxArguments?: number;
  /** With SVC_REDIS_WAIT_REPLICAS > 0: sends writes and has replicas confirm them before they are acknowledged. */
  readonly durable?: DurableWriter;
  /** Behind Sentinel: closed while a failover is under way, when writes are refused rather than risked. */
  readonly fence?: Fence;
  /** The connections of blocking commands (a list pop's `wait`); without it such a wait answers 503. */
  readonly waiters?: WaiterPool;
  /**
   * With the change feed on, its stream: what a write outside our scripts (a list's blocking pop) appends its
   * event to. Every other write appends it inside its script (typed.lua's `changed`).
   */
  readonly changes?: { readonly key: string; readonly maxlen: number };
  /** On a Cluster with the change feed on: each master's stream, appended to every writing script call. */
  readonly streams?: ClusterStreams;
}
