import { randomInt } from 'node:crypto';
import { Writable } from 'node:stream';
import request from 'supertest';
import winston from 'winston';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { type Count, type IncrementBy, RateCounters, STALE_MS } from '../src/http/rate-counters';
import { CountingRedisStore } from '../src/http/rate-limit-store';
import { createLogger } from '../src/observability/logger';
import { createRedis, limiterConnection } from '../src/redis/client';
import { contract, type TestApp, testApp } from './support/app';
import { type RedisCluster, startRedisCluster } from './support/redis-cluster';
import { startRedisServer } from './support/redis-server';

// Every test poses as its own client (X-Forwarded-For, trusted), so counters never mix between tests or runs.
const LIMITED = { SVC_RATE_LIMIT_ENABLED: 'true', SVC_TRUST_PROXY: 'true', SVC_RATE_LIMIT_REQUESTS: '3' };
const used: string[] = [];
const newClient = () => {
  const ip = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
  used.push(ip);
  return ip;
};
const hit = (t: TestApp, ip: string, url = '/store/string/missing-key') =>
  request(t.data).get(url).set('X-Forwarded-For', ip);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Counter keys of the RateCounters tests (the app's own are `#svc:rl:data:` and `#svc:rl:admin:`). */
const PREFIX = '#svc:rl:test:';
const times = <T>(n: number, fn: () => T) => Array.from({ length: n }, fn);
const hitsOf = (counts: Count[]) => counts.map((c) => c.hits);

let t: TestApp;
beforeAll(async () => {
  t = await testApp('rate-limit', { ...LIMITED, SVC_ADMIN_RATE_LIMIT_REQUESTS: '5' });
});
afterAll(async () => {
  if (used.length > 0)
    await t.raw.del(...used.flatMap((ip) => [`#svc:rl:data:${ip}`, `#svc:rl:admin:${ip}`]));
  await t.close();
});

describe('within the limit', () => {
  test('every response carries RateLimit-Limit, -Remaining and -Reset', async () => {
    const ip = newClient();
    const first = await hit(t, ip);
    expect(first.status).toBe(404);
    expect(first.headers['ratelimit-limit']).toBe('3');
    expect(first.headers['ratelimit-remaining']).toBe('2');
    expect(Number(first.headers['ratelimit-reset'])).toBeGreaterThan(0);
    expect((await hit(t, ip)).headers['ratelimit-remaining']).toBe('1');
  });

  test('the counter is an internal key in Redis, outside every user key', async () => {
    const ip = newClient();
    await hit(t, ip);
    expect(await t.raw.get(`#svc:rl:data:${ip}`)).toBe('1');
  });
});

describe('past the limit', () => {
  test('when a client sends one request too many, then 429 rate_limit_exceeded with retry_after', async () => {
    const ip = newClient();
    for (let i = 0; i < 3; i++) expect((await hit(t, ip)).status).toBe(404);
    const res = await hit(t, ip);
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({ error: 'rate_limit_exceeded', status: 429 });
    expect(res.body.retry_after).toBeGreaterThanOrEqual(1);
    expect(res.body.retry_after).toBeLessThanOrEqual(60);
    expect(res.headers['retry-after']).toBe(String(res.body.retry_after));
    expect(res.headers['ratelimit-remaining']).toBe('0');
  });

  test('when another client sends requests, then it has its own budget', async () => {
    const ip = newClient();
    for (let i = 0; i < 4; i++) await hit(t, ip);
    expect((await hit(t, newClient())).status).toBe(404);
  });

  test('when two instances serve one client, then they share one counter through Redis', async () => {
    const other = await testApp('rate-limit-2', LIMITED);
    try {
      const ip = newClient();
      expect((await hit(t, ip)).status).toBe(404);
      expect((await hit(other, ip)).status).toBe(404);
      expect((await hit(t, ip)).status).toBe(404);
      expect((await hit(other, ip)).status).toBe(429);
    } finally {
      await other.close();
    }
  });

  test('when the window has passed, then the client is served again', async () => {
    const short = await testApp('rate-limit-window', {
      ...LIMITED,
      SVC_RATE_LIMIT_REQUESTS: '1',
      SVC_RATE_LIMIT_WINDOW: '1',
    });
    try {
      const ip = newClient();
      await hit(short, ip);
      expect((await hit(short, ip)).status).toBe(429);
      // Wait for Redis to expire the counter (generously: the machine may be slow).
      for (let i = 0; i < 100 && (await t.raw.exists(`#svc:rl:data:${ip}`)); i++) await sleep(100);
      expect((await hit(short, ip)).status).toBe(404);
    } finally {
      await short.close();
    }
  });
});

describe('the admin endpoints', () => {
  test('when data requests are used up, then admin requests still pass on their own budget', async () => {
    const ip = newClient();
    for (let i = 0; i < 4; i++) await hit(t, ip);
    expect((await hit(t, ip)).status).toBe(429);
    const admin = await hit(t, ip, '/store/admin/ping');
    expect(admin.status).toBe(200);
    expect(admin.headers['ratelimit-limit']).toBe('5');
    expect(await t.raw.get(`#svc:rl:admin:${ip}`)).toBe('1');
  });

  test('when admin requests are used up, then 429 on admin only (under /api too)', async () => {
    const ip = newClient();
    for (let i = 0; i < 5; i++) await hit(t, ip, '/api/admin/ping');
    expect((await hit(t, ip, '/store/admin/stats')).status).toBe(429);
    expect((await hit(t, ip)).status).toBe(404);
  });
});

describe('configuration', () => {
  test('when SVC_RATE_LIMIT_ENABLED=false, then there are no headers and no 429', async () => {
    const off = await testApp('rate-limit-off', { SVC_TRUST_PROXY: 'true', SVC_RATE_LIMIT_REQUESTS: '1' });
    try {
      const ip = newClient();
      for (let i = 0; i < 3; i++) {
        const res = await hit(off, ip);
        expect(res.status).toBe(404);
        expect(res.headers['ratelimit-limit']).toBeUndefined();
      }
    } finally {
      await off.close();
    }
  });

  test('when a reload changes the limit or the window, then it applies without a restart', async () => {
    const live = await testApp('rate-limit-reload', LIMITED);
    try {
      const ip = newClient();
      expect((await hit(live, ip)).headers['ratelimit-limit']).toBe('3');
      live.context.config = loadConfig({
        ...LIMITED,
        SVC_RATE_LIMIT_REQUESTS: '7',
        SVC_KEY_PREFIX: live.prefix,
      });
      expect((await hit(live, ip)).headers['ratelimit-limit']).toBe('7');
      live.context.config = loadConfig({
        ...LIMITED,
        SVC_RATE_LIMIT_WINDOW: '600',
        SVC_KEY_PREFIX: live.prefix,
      });
      // A window already running keeps its end; counters started after the change get the new length.
      expect(Number((await hit(live, newClient())).headers['ratelimit-reset'])).toBeGreaterThan(60);
      live.context.config = loadConfig({ SVC_KEY_PREFIX: live.prefix, SVC_RATE_LIMIT_ENABLED: 'false' });
      expect((await hit(live, ip)).headers['ratelimit-limit']).toBeUndefined();
    } finally {
      await live.close();
    }
  });
});

describe('a busy client (the increments of one turn go to Redis together)', () => {
  test('when it sends many requests at once, then exactly the limit gets through, each with its own count', async () => {
    const ip = newClient();
    const limit = 5;
    const busy = await testApp('rate-limit-busy', { ...LIMITED, SVC_RATE_LIMIT_REQUESTS: String(limit) });
    try {
      const responses = await Promise.all(Array.from({ length: 12 }, () => hit(busy, ip)));
      const passed = responses.filter((r) => r.status !== 429);
      expect(passed).toHaveLength(limit);
      expect(passed.map((r) => Number(r.headers['ratelimit-remaining'])).sort((a, b) => a - b)).toEqual([
        0, 1, 2, 3, 4,
      ]);
      expect(await busy.raw.get(`#svc:rl:data:${ip}`)).toBe('12');
    } finally {
      await busy.close();
    }
  });

  type Behave = (key: string, real: () => Promise<[number, number]>) => Promise<[number, number]>;
  /**
   * Counters on the test app's limiter connection whose calls are recorded (the hits sent per call); `behave`
   * decides what a call does (by default it goes to Redis).
   */
  const recordingCounters = (behave: Behave = (_key, real) => real(), windowMs = 60_000) => {
    const calls: number[] = [];
    const redis = t.context.limiterRedis;
    const incrementBy: IncrementBy = (key, by, ms) => {
      calls.push(by);
      return behave(key, () => redis.rateLimitIncrement(key, by, ms));
    };
    return { counters: new RateCounters(incrementBy, windowMs), calls };
  };

  test('when increments are asked for in one turn, then they go to Redis as one call with their count', async () => {
    const key = PREFIX + newClient();
    const { counters, calls } = recordingCounters();
    try {
      expect(hitsOf(await Promise.all(times(10, () => counters.hit(key, 20))))).toEqual([
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
      ]);
      expect(calls).toEqual([10]);
      expect((await counters.hit(key, 20)).hits).toBe(11);
      expect(calls).toEqual([10, 1]);
      const ttl = await t.raw.pttl(key);
      expect(ttl).toBeGreaterThan(50_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
    } finally {
      await t.raw.del(key);
    }
  });

  test('when the window has begun, then a call adds its count and the window keeps its end', async () => {
    const key = PREFIX + newClient();
    const { counters, calls } = recordingCounters();
    try {
      await t.raw.set(key, 3, 'PX', 30_000);
      const results = await Promise.all(times(4, () => counters.hit(key, 20)));
      expect(hitsOf(results)).toEqual([4, 5, 6, 7]);
      expect(calls).toEqual([4]);
      const left = (results[0]?.resetAt ?? 0) - Date.now();
      expect(left).toBeGreaterThan(20_000);
      expect(left).toBeLessThanOrEqual(30_000);
      expect(await t.raw.get(key)).toBe('7');
    } finally {
      await t.raw.del(key);
    }
  });

  test('when a counter call fails, then its increments fail and later ones are counted', async () => {
    const key = PREFIX + newClient();
    let call = 0;
    const { counters, calls } = recordingCounters((_key, real) =>
      ++call === 1 ? Promise.reject(new Error('Redis went away')) : real(),
    );
    try {
      const failed = await Promise.allSettled(times(2, () => counters.hit(key, 20)));
      expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
      expect(hitsOf(await Promise.all(times(3, () => counters.hit(key, 20))))).toEqual([1, 2, 3]);
      expect(calls).toEqual([2, 3]);
    } finally {
      await t.raw.del(key);
    }
  });

  test("when one key's call throws at once, then its increments fail and the other keys' are counted", async () => {
    const [bad, good] = [PREFIX + newClient(), PREFIX + newClient()];
    // As ioredis does on a Cluster for a slot that no node serves: a throw, not a rejected promise.
    const { counters } = recordingCounters((key, real) => {
      if (key === bad) throw new TypeError('no node serves this slot');
      return real();
    });
    try {
      const results = await Promise.allSettled([
        ...times(2, () => counters.hit(bad, 20)),
        ...times(3, () => counters.hit(good, 20)),
      ]);
      expect(results.map((r) => r.status)).toEqual([
        'rejected',
        'rejected',
        'fulfilled',
        'fulfilled',
        'fulfilled',
      ]);
      expect(results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.hits] : []))).toEqual([1, 2, 3]);
    } finally {
      await t.raw.del(good);
    }
  });
});

describe('requests decided without waiting for Redis', () => {
  const counting = (windowMs = 60_000) => {
    const calls: number[] = [];
    const redis = t.context.limiterRedis;
    const counters = new RateCounters((key, by, ms) => {
      calls.push(by);
      return redis.rateLimitIncrement(key, by, ms);
    }, windowMs);
    return { counters, calls };
  };

  test('when a client has used less than half its limit, then its requests are counted at once and reach Redis later', async () => {
    const key = PREFIX + newClient();
    const { counters, calls } = counting();
    try {
      expect(await counters.hit(key, 10)).toMatchObject({ hits: 1 });
      // Four more stay within half the limit: answered at once, in order; the sixth waits for Redis.
      const local = times(4, () => counters.hit(key, 10));
      expect(local.some((c) => c instanceof Promise)).toBe(false);
      expect(hitsOf(local as Count[])).toEqual([2, 3, 4, 5]);
      const sixth = counters.hit(key, 10);
      expect(sixth).toBeInstanceOf(Promise);
      expect((await sixth).hits).toBe(6);
      // The local hits went with the waiting one: one call of 5 after the first.
      expect(calls).toEqual([1, 5]);
      expect(await t.raw.get(key)).toBe('6');
    } finally {
      await t.raw.del(key);
    }
  });

  test('when hits were counted locally, then settle() sends them and the counter in Redis has every one', async () => {
    const key = PREFIX + newClient();
    const { counters, calls } = counting();
    try {
      await counters.hit(key, 1000);
      for (let i = 0; i < 20; i++) expect(counters.hit(key, 1000)).not.toBeInstanceOf(Promise);
      await counters.settle();
      expect(calls).toEqual([1, 20]);
      expect(await t.raw.get(key)).toBe('21');
    } finally {
      await t.raw.del(key);
    }
  });

  test("when two instances count one client, then each learns the other's hits from Redis's next answer", async () => {
    const key = PREFIX + newClient();
    const [a, b] = [counting().counters, counting().counters];
    try {
      expect((await a.hit(key, 100)).hits).toBe(1);
      expect((await b.hit(key, 100)).hits).toBe(2);
      // a has not heard of b's hit yet: its local count is one short (the documented bound)...
      expect(a.hit(key, 100)).toMatchObject({ hits: 2 });
      await a.settle();
      // ...until its counts reach Redis, whose answer has every instance's hits.
      expect(a.hit(key, 100)).toMatchObject({ hits: 4 });
      await a.settle();
      expect(await t.raw.get(key)).toBe('4');
    } finally {
      await t.raw.del(key);
    }
  });

  test('when the count from Redis is older than STALE_MS, then the next request waits for Redis again', async () => {
    const key = PREFIX + newClient();
    const { counters } = counting();
    try {
      await counters.hit(key, 1000);
      expect(counters.hit(key, 1000)).not.toBeInstanceOf(Promise);
      await counters.settle();
      await sleep(STALE_MS + 100);
      const later = counters.hit(key, 1000);
      expect(later).toBeInstanceOf(Promise);
      expect((await later).hits).toBe(3);
    } finally {
      await t.raw.del(key);
    }
  });

  test('when the window is over, then the next request waits for Redis and starts a new window', async () => {
    const key = PREFIX + newClient();
    const { counters } = counting(300);
    try {
      await counters.hit(key, 1000);
      for (let i = 0; i < 100 && (await t.raw.exists(key)); i++) await sleep(50);
      const next = counters.hit(key, 1000);
      expect(next).toBeInstanceOf(Promise);
      expect((await next).hits).toBe(1);
    } finally {
      await t.raw.del(key);
    }
  });

  test("when express-rate-limit asks the store far from the limit, then rate-limit-redis's store answers at once, as a value", async () => {
    const ip = newClient();
    const redis = t.context.limiterRedis;
    const store = new CountingRedisStore(
      {
        sendCommand: (...args: string[]) => redis.call(...(args as [string])) as Promise<number>,
        prefix: PREFIX,
      },
      (key, by, ms) => redis.rateLimitIncrement(key, by, ms),
      () => 10,
    );
    store.init({ windowMs: 60_000 } as Parameters<CountingRedisStore['init']>[0]);
    try {
      const first = await store.increment(ip);
      expect(first.totalHits).toBe(1);
      const second = store.increment(ip);
      expect(second).not.toBeInstanceOf(Promise);
      expect(second).toMatchObject({ totalHits: 2 });
      expect((second as { resetTime: Date }).resetTime.getTime()).toBeGreaterThan(Date.now() + 50_000);
      await store.settle();
      // The store's own read (rate-limit-redis's get script) sees every hit.
      expect(await store.get(ip)).toMatchObject({ totalHits: 2 });
    } finally {
      await t.raw.del(PREFIX + ip);
    }
  });
});

describe('when Redis is down', () => {
  test('then an anonymous request, which the limiter cannot count, is refused with 503 (fail closed)', async () => {
    const server = await startRedisServer();
    const config = loadConfig({ ...LIMITED, SVC_REDIS_URL: server.url, SVC_PROTECTED_MODE: 'false' });
    const redis = createRedis(config);
    const limiterRedis = limiterConnection(redis);
    try {
      await Promise.all([redis.connect(), limiterRedis.connect()]);
      const app = createApp({
        config,
        redis,
        limiterRedis,
        logger: createLogger(config.log, true),
        contract: contract(),
      }).data;
      expect((await request(app).get('/store/string/k')).headers['ratelimit-limit']).toBe('3');
      await server.stop();
      for (let i = 0; i < 4; i++) {
        const res = await request(app).get('/store/string/k');
        expect(res.status).toBe(503);
        expect(res.body.error).toBe('service_unavailable');
        expect(res.headers['ratelimit-limit']).toBeUndefined();
      }
    } finally {
      // Closing a client that is still reconnecting leaves a handle open: let it reconnect, then quit.
      await server.start();
      for (let i = 0; i < 100 && (redis.status !== 'ready' || limiterRedis.status !== 'ready'); i++)
        await sleep(100);
      await Promise.all([redis.quit(), limiterRedis.quit()]);
      await server.stop();
    }
  });
});

describe('behind a proxy it was not told about', () => {
  test('when requests carry X-Forwarded-For and SVC_TRUST_PROXY is false, then one warning says so', async () => {
    const proxied = await testApp('rate-limit-proxy', { ...LIMITED, SVC_TRUST_PROXY: 'false' });
    const warnings: string[] = [];
    proxied.context.logger.configure({
      level: 'warn',
      transports: [
        new winston.transports.Stream({
          stream: new Writable({
            objectMode: true,
            write(info: { message: string; cause?: string }, _encoding, done) {
              warnings.push(`${info.message}: ${info.cause}`);
              done();
            },
          }),
        }),
      ],
    });
    try {
      await hit(proxied, '10.9.9.9');
      await hit(proxied, '10.9.9.8');
      expect(warnings).toEqual([expect.stringMatching(/X-Forwarded-For .* SVC_TRUST_PROXY is false/)]);
    } finally {
      await proxied.close();
    }
  });
});

describe('on a Redis Cluster', () => {
  let redisCluster: RedisCluster | undefined;
  afterAll(() => redisCluster?.stop());

  test('then counters of clients on every master work (the scripts are loaded on each)', async () => {
    redisCluster = await startRedisCluster();
    const cluster = await testApp('rate-limit-cluster', {
      ...LIMITED,
      SVC_RATE_LIMIT_REQUESTS: '1',
      SVC_REDIS_CLUSTER_NODES: redisCluster.nodes,
    });
    try {
      // Twelve clients at once, three requests each: their counters land on all three masters.
      const ips = Array.from({ length: 12 }, (_, i) => `10.200.0.${i + 1}`);
      const statuses = await Promise.all(
        ips.map(async (ip) =>
          (await Promise.all([1, 2, 3].map(() => hit(cluster, ip)))).map((r) => r.status),
        ),
      );
      for (const each of statuses) expect(each.sort()).toEqual([404, 429, 429]);
    } finally {
      await cluster.close();
    }
  }, 60_000);
});
