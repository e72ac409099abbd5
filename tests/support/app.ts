// Builds an app wired to the test Redis under a key prefix of its own, and tears it down.
import Redis from 'ioredis';
import { type Apps, createApp, OPENAPI_FILE } from '../../src/app';
import { loadConfig } from '../../src/config';
import { Contract } from '../../src/http/contract';
import { limiterConnection } from '../../src/http/rate-limit';
import { createLogger } from '../../src/observability/logger';
import { createRedis, type RedisClient, writerConnection } from '../../src/redis/client';
import { cleanup, testPrefix } from './keys';

let sharedContract: Contract | undefined;
/** The contract is read once per test file: compiling it is the slowest part of creating an app. */
export const contract = () => {
  sharedContract ??= new Contract(OPENAPI_FILE);
  return sharedContract;
};

export interface TestApp extends Apps {
  /** The service's own client. */
  redis: RedisClient;
  /** A plain client (no prefix handling) for looking at what the service wrote, as redis-cli would. */
  raw: Redis;
  /** The SVC_KEY_PREFIX of this app: raw keys are `${prefix}${key}`. */
  prefix: string;
  close(): Promise<void>;
}

/**
 * QUIT, or just close the socket: a client without an offline queue refuses QUIT while it reconnects (`Stream
 * isn't writeable`), as after a test stopped and restarted its Redis; there is nothing left to say to it then.
 */
const quit = (client: RedisClient | Redis): Promise<void> =>
  client.quit().then(
    () => undefined,
    () => client.disconnect(),
  );

/** An app on the test Redis; `env` holds SVC_* overrides. Rate limits are off unless `env` turns them on. */
export async function testApp(name: string, env: Record<string, string> = {}): Promise<TestApp> {
  const prefix = testPrefix(name);
  const settings = {
    SVC_REDIS_URL: process.env.REDIS_URL,
    SVC_KEY_PREFIX: prefix,
    SVC_RATE_LIMIT_ENABLED: 'false',
    SVC_PROTECTED_MODE: 'false',
    ...env,
  };
  const config = loadConfig(settings);
  const logger = createLogger(config.log, true);
  const redis = createRedis(config);
  // As in main.ts: the rate-limit counters have a connection of their own.
  const limiterRedis = limiterConnection(redis);
  const writerRedis = config.redis.waitReplicas > 0 ? writerConnection(redis) : undefined;
  await Promise.all([redis.connect(), limiterRedis.connect(), writerRedis?.connect()]);
  const raw = new Redis(process.env.REDIS_URL as string);
  // A reload reads the same settings again (and SVC_CONFIG_FILE, when `env` names one).
  const apps = createApp({
    limiterRedis,
    writerRedis,
    config,
    redis,
    logger,
    // A contract is compiled with the batch limit, so a test that changes it gets its own.
    contract: env.SVC_BATCH_MAX_OPERATIONS === undefined ? contract() : undefined,
    loadConfig: () => loadConfig(settings),
  });
  return {
    ...apps,
    redis,
    raw,
    prefix,
    async close() {
      try {
        await cleanup(raw, prefix);
      } finally {
        await Promise.all([redis, limiterRedis, ...(writerRedis ? [writerRedis] : []), raw].map(quit));
      }
    },
  };
}
