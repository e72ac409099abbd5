// createService(config, options): the composition root. Builds every resource from the config, closes them in one call.
import { type AppDeps, type Apps, createApp } from './app';
import { type Config, ConfigError } from './config';
import { BLOCK_MS } from './feed/hub';
import { settingRefusals } from './redis/capability-watch';
import type { RedisClient } from './redis/client';
import { createRedis, feedConnection, limiterConnection, writerConnection } from './redis/client';
import { failoverFence } from './redis/failover-fence';
import { checkTls, connectOrTlsFailure } from './redis/tls';
import { WaiterPool } from './redis/waiters';

/** How long close() waits for a connection's socket to close after QUIT was answered. */
const END_WAIT_MS = 1000;

/** What the service takes besides the config: the logger, and what tests and cluster workers supply. */
export type ServiceOptions = Omit<
  AppDeps,
  'config' | 'redis' | 'limiterRedis' | 'writerRedis' | 'fence' | 'feedRedis' | 'waiters'
>;

export interface Service extends Apps {
  /** The data connection. */
  readonly redis: RedisClient;
  /** The rate limiter's connection (see limiterConnection). */
  readonly limiterRedis: RedisClient;
  /** With SVC_REDIS_WAIT_REPLICAS > 0: the connection writes go through (see redis/durable.ts). */
  readonly writerRedis: RedisClient | undefined;
  /**
   * Connects: resolves once the data connection is ready and rejects when Redis is not reachable (the service
   * then answers 503 and keeps reconnecting). The writer connection is awaited but may fail; the limiter's
   * connects in the background unless `waitForLimiter` (tests that count requests from the first one). Rejects
   * with a ConfigError when the server refuses what a setting needs (WAIT for SVC_REDIS_WAIT_REPLICAS).
   */
  connect(options?: { waitForLimiter?: boolean }): Promise<void>;
  /** Releases every resource: the Sentinel listeners, then each connection (QUIT, else disconnect). Never throws. */
  close(): Promise<void>;
}

/**
 * QUIT when connected (replies in flight are answered first), else just stop: a client without an offline queue
 * refuses QUIT while it (re)connects, and QUIT on a client that never connected would start connecting. Resolves
 * once the socket has closed (at most END_WAIT_MS later). Never throws.
 */
async function quit(client: RedisClient): Promise<void> {
  if (client.status === 'end') return;
  let timer: NodeJS.Timeout | undefined;
  const ended = new Promise<void>((resolve) => {
    client.once('end', resolve);
    timer = setTimeout(resolve, END_WAIT_MS);
  });
  if (client.status === 'ready') {
    await client.quit().catch(() => stop(client));
    // Behind Sentinel, QUIT leaves ioredis's failover detector subscribed to every Sentinel (ioredis#1362, fixed
    // after 5.11.1): its connections retry each minute for ever and keep the process from exiting. disconnect()
    // closes them; the QUIT was answered, so nothing in flight is lost.
    if ((client.options as { failoverDetector?: boolean }).failoverDetector) stop(client);
  } else stop(client);
  // Stopped between two reconnection attempts, an ioredis client never reports 'end', but tries no more.
  if (client.status !== 'reconnecting') await ended;
  clearTimeout(timer);
}

function stop(client: RedisClient): void {
  try {
    client.disconnect();
  } catch {
    // Already closed.
  }
}

/** Never listens (main.ts does, through http/server.ts). Throws a ConfigError when the API keys or the JWT key are invalid. */
export function createService(config: Config, options: ServiceOptions): Service {
  const redis = createRedis(config);
  // Both report the same causes as the data connection, which main.ts logs.
  const limiterRedis = limiterConnection(redis);
  limiterRedis.on('error', () => {});
  const writerRedis = config.redis.waitReplicas > 0 ? writerConnection(redis) : undefined;
  writerRedis?.on('error', () => {});
  // The change feed's reader blocks on XREAD: a connection of its own (the hub connects and closes it).
  const feedRedis = config.changes.enabled ? feedConnection(redis, BLOCK_MS) : undefined;
  feedRedis?.on('error', () => {});
  const fence = failoverFence(writerRedis ? [redis, writerRedis] : [redis], config);
  const connections = [
    redis,
    limiterRedis,
    ...(writerRedis ? [writerRedis] : []),
    ...(feedRedis ? [feedRedis] : []),
  ];
  // A wait's connection timeout: the longest wait plus the usual command timeout (see ops/list-wait.ts).
  const waitTimeoutMs = config.limits.listMaxWait * 1000 + config.redis.commandTimeoutMs;
  const waiters = new WaiterPool(redis, config.listMaxWaiters, waitTimeoutMs, config.listMaxWaitersPerClient);
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      fence?.stop();
      // Subscribers first: their streams end with a close reason while the data connection still answers.
      await apps?.context.feed?.close();
      apps?.context.locks.close();
      waiters.close();
      await Promise.all(connections.map(quit));
    })();
    return closing;
  };
  let apps: Apps | undefined;
  try {
    apps = createApp({ ...options, config, redis, limiterRedis, writerRedis, fence, feedRedis, waiters });
  } catch (err) {
    void close();
    throw err;
  }
  return {
    ...apps,
    redis,
    limiterRedis,
    writerRedis,
    async connect({ waitForLimiter = false } = {}) {
      await checkTls(config);
      const limiter = limiterRedis.connect().catch(() => {});
      try {
        await connectOrTlsFailure(redis, config);
      } finally {
        await writerRedis?.connect().catch(() => {});
        if (waitForLimiter) await limiter;
      }
      // The probe started by the connection's 'ready': a setting the server cannot honour stops the start.
      const context = (apps as Apps).context;
      const problems = settingRefusals(config, await context.capabilities.settled());
      if (problems.length) throw new ConfigError(problems);
    },
    close,
  };
}
