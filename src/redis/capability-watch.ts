// Keeps the server's capabilities current: probed when the data connection becomes ready (start, reconnect, failover).
import type { Config } from '../config';
import { type Capabilities, probeCapabilities, refusalOf } from './capabilities';
import type { RedisClient } from './client';

/** Where the answer is logged (the service's winston logger). */
interface Log {
  log(level: 'info' | 'debug', message: string, meta: Record<string, unknown>): unknown;
}

/** Tries of one probe while the connection is ready (100 ms more between each: 2 s at most). */
const PROBE_ATTEMPTS = 6;
/** How long after a Cluster node joins its pool the capabilities are probed again (nodes join in bursts). */
const NODE_SETTLE_MS = 500;

/** The latest probe's answer per data connection, for code that holds the connection only (engine/plain-writes). */
const probed = new WeakMap<object, Capabilities>();

/**
 * Whether the server behind `redis` takes `SET key value NX GET` (Redis 7.0+; Valkey, which starts at 7.2): known
 * from its latest probe, false until one answered.
 */
export function takesSetNxGet(redis: object): boolean {
  const found = probed.get(redis);
  if (!found?.version || found.engine === 'unknown') return false;
  return found.engine === 'valkey' || Number(found.version.split('.')[0]) >= 7;
}

export class CapabilityWatch {
  /** The latest probe's answer; undefined until the first one (Redis not reached yet). Read as a field per use. */
  current: Capabilities | undefined;
  private probing: Promise<Capabilities | undefined> = Promise.resolve(undefined);
  private logged = '';
  /** Probes asked for and not yet answered. */
  private pending = 0;
  private scheduled: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly maxArguments: number | null,
    private readonly logger: Log,
  ) {
    // One probe per connection event of the data connection (not of the limiter's, writer's or waiters' ones).
    redis.on('ready', () => void this.probe());
    // A Cluster stays ready through a failover: a node joining its pool (a promoted replica) is probed, once for
    // the nodes that join together.
    redis.on('+node', () => {
      if (this.redis.status !== 'ready' || this.scheduled) return;
      this.scheduled = setTimeout(() => {
        this.scheduled = undefined;
        void this.probe();
      }, NODE_SETTLE_MS);
      this.scheduled.unref();
    });
  }

  /** Probes again (after any probe under way); resolves to the answer, or undefined when Redis was not reached. */
  probe(): Promise<Capabilities | undefined> {
    this.pending++;
    this.probing = this.probing.then(async () => {
      // A Cluster is ready before its node connections are (commands then fail at once, with no offline queue).
      for (let attempt = 1; attempt <= PROBE_ATTEMPTS; attempt++) {
        try {
          const found = await probeCapabilities(this.redis, this.maxArguments);
          this.current = found;
          probed.set(this.redis, found);
          this.log(found);
          return found;
        } catch {
          if (this.redis.status !== 'ready') break;
          await new Promise((resolve) => setTimeout(resolve, attempt * 100));
        }
      }
      return this.current;
    });
    void this.probing.finally(() => this.pending--);
    return this.probing;
  }

  /**
   * The answer of the probe under way, or the latest; a first probe when the connection is ready and none ran yet
   * (a Cluster's connect() may resolve before its 'ready' event).
   */
  settled(): Promise<Capabilities | undefined> {
    if (this.pending === 0 && this.current === undefined && this.redis.status === 'ready')
      return this.probe();
    return this.probing;
  }

  /** Logged when it changes (the first probe, a failover to another engine), at debug otherwise. */
  private log(found: Capabilities): void {
    const { engine, version, cluster, functions, refused } = found;
    const summary = {
      engine,
      version,
      cluster,
      functions,
      refused: refused.map((r) => `${r.command}: ${r.reason}`),
    };
    const text = JSON.stringify(summary);
    this.logger.log(text === this.logged ? 'debug' : 'info', 'redis capabilities', summary);
    this.logged = text;
  }
}

/**
 * What the configuration asks of the server that it refuses: each a line naming the setting, for a start-up error
 * (the service stops rather than fail at the first write).
 */
export function settingRefusals(config: Config, capabilities: Capabilities | undefined): string[] {
  const problems: string[] = [];
  const wait = refusalOf(capabilities, 'WAIT');
  if (config.redis.waitReplicas > 0 && wait)
    problems.push(
      `SVC_REDIS_WAIT_REPLICAS=${config.redis.waitReplicas} needs WAIT, which the server refuses (${wait.reason}): set it to 0 on this server`,
    );
  const xadd = refusalOf(capabilities, 'XADD');
  if (config.changes.enabled && xadd)
    problems.push(
      `SVC_CHANGES_ENABLED needs XADD, which the server refuses (${xadd.reason}): set it to false on this server`,
    );
  const scripts = refusalOf(capabilities, 'EVALSHA');
  if (scripts)
    problems.push(
      `the server refuses EVALSHA (${scripts.reason}): the service runs every operation as a Lua script`,
    );
  return problems;
}
