// The test harness itself: a Redis is provided, spawned servers restart on their port, and key cleanup is scoped.
import { execFileSync } from 'node:child_process';
import Redis from 'ioredis';
import { testApp } from './support/app';
import { cleanup, testPrefix } from './support/keys';
import { pingRaw, REDIS_SERVER, startRedisServer } from './support/redis-server';

describe('test harness', () => {
  it('when the tests start, then REDIS_URL names a Redis that answers PING', async () => {
    expect(process.env.REDIS_URL).toMatch(/^rediss?:\/\//);
    const redis = new Redis(process.env.REDIS_URL as string, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      await expect(redis.ping()).resolves.toBe('PONG');
    } finally {
      redis.disconnect();
    }
  });

  it('when TEST_REDIS_SERVER names an engine, then the test Redis is that engine (its version in INFO)', async () => {
    if (!process.env.TEST_REDIS_SPAWNED) return; // REDIS_URL named a Redis of the caller's
    const version = /v=(\S+)/.exec(execFileSync(REDIS_SERVER, ['--version'], { encoding: 'utf8' }))?.[1];
    const redis = new Redis(process.env.REDIS_URL as string);
    try {
      const info = (await redis.info('server')) as string;
      // Valkey reports its own version as valkey_version (redis_version stays 7.2.4).
      expect(info).toMatch(new RegExp(`^(valkey|redis)_version:${version?.replace(/\./g, '\\.')}\r?$`, 'm'));
    } finally {
      redis.disconnect();
    }
  });

  it('when a spawned redis-server is stopped and started again, then it answers on the same port', async () => {
    const server = await startRedisServer();
    try {
      expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
      await expect(pingRaw(server.port)).resolves.toBe('+PONG');

      await server.stop();
      await expect(pingRaw(server.port)).resolves.toBeNull();

      await server.start();
      await expect(pingRaw(server.port)).resolves.toBe('+PONG');

      await server.kill();
      await expect(pingRaw(server.port)).resolves.toBeNull();
    } finally {
      await server.stop();
    }
  });

  it('when cleanup runs for a prefix, then only the keys under that prefix are gone', async () => {
    const prefix = testPrefix('harness');
    expect(prefix).toMatch(/^t:harness:[0-9a-f]{6}:$/);
    expect(testPrefix('a b/c')).toMatch(/^t:a_b_c:[0-9a-f]{6}:$/);

    const other = testPrefix('harness');
    const redis = new Redis(process.env.REDIS_URL as string);
    try {
      await redis.mset(`${prefix}a`, '1', `${prefix}b`, '2', `${other}keep`, '3');
      await redis.sadd(`${prefix}set`, 'x');

      await expect(cleanup(redis, prefix)).resolves.toBe(3);
      await expect(redis.exists(`${prefix}a`, `${prefix}b`, `${prefix}set`)).resolves.toBe(0);
      await expect(redis.get(`${other}keep`)).resolves.toBe('3');
    } finally {
      await cleanup(redis, other);
      redis.disconnect();
    }
  });

  it('when the Redis of an app is gone (its clients reconnecting), then close() still resolves', async () => {
    const server = await startRedisServer();
    try {
      const t = await testApp('harness-close', { SVC_REDIS_URL: server.url });
      await server.stop();
      // Both clients refuse QUIT now (no offline queue, no connection): close() falls back to disconnect().
      await expect(t.close()).resolves.toBeUndefined();
    } finally {
      await server.stop();
    }
  });
});
