// The smaller guards of issue 22: admin paths in any case, the limiter's failure policy, scrypt work, tenant
// prefixes, IPv6 networks, key listing's hard limit, and a long-poll's next that never moves over others' events.
import request from 'supertest';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { compareIds } from '../src/feed/event';
import { loadCredentials } from '../src/http/auth/credentials';
import { identify, SCRYPT_MAX_CONCURRENT } from '../src/http/auth/identify';
import { clientNetworks } from '../src/http/client-address';
import { createLogger } from '../src/observability/logger';
import { createRedis, limiterConnection } from '../src/redis/client';
import { decodeCursor, encodeCursor } from '../src/redis/cursor';
import { contract, type TestApp, testApp } from './support/app';
import { apiKey, basicAuth, bearer, keyNew } from './support/auth';
import { feedApp, streamOf } from './support/feed';
import { startRedisServer } from './support/redis-server';

describe('the rate limiter', () => {
  test('when an admin path is written in capitals, then it counts on the admin budget', async () => {
    const t = await testApp('hardening-case', {
      SVC_RATE_LIMIT_ENABLED: 'true',
      SVC_RATE_LIMIT_REQUESTS: '2',
      SVC_ADMIN_RATE_LIMIT_REQUESTS: '50',
    });
    try {
      for (const path of ['/STORE/ADMIN/health', '/Store/Admin/health', '/API/ADMIN/health']) {
        const res = await request(t.data).get(path);
        expect(res.status).toBe(200);
        expect(res.headers['ratelimit-limit']).toBe('50');
      }
    } finally {
      await t.close();
    }
  });

  test('when its counters cannot be reached, then anonymous requests are refused (503) and authenticated ones go on', async () => {
    const ok = apiKey('ok', ['read', 'write']);
    const down = await startRedisServer();
    const config = loadConfig({
      SVC_REDIS_URL: process.env.REDIS_URL,
      SVC_KEY_PREFIX: 'test:hardening-limiter:',
      SVC_RATE_LIMIT_ENABLED: 'true',
      SVC_API_KEYS: JSON.stringify({ keys: [ok] }),
    });
    const redis = createRedis(config);
    const limiterRedis = limiterConnection(createRedis(loadConfig({ SVC_REDIS_URL: down.url })));
    try {
      await redis.connect();
      await down.stop();
      const app = createApp({
        config,
        redis,
        limiterRedis,
        logger: createLogger(config.log, true),
        contract: contract(),
      }).data;
      const guess = await request(app)
        .get('/store/string/k')
        .set('Authorization', 'Bearer guessed-key-0123456789');
      expect([guess.status, guess.body.error]).toEqual([503, 'service_unavailable']);
      expect(guess.body.message).toContain('rate limiter');
      const none = await request(app).get('/store/string/k');
      expect(none.status).toBe(503);
      const good = await request(app).get('/store/string/k').set('Authorization', bearer(ok));
      expect([good.status, good.body.error]).toEqual([404, 'not_found']);
    } finally {
      limiterRedis.disconnect();
      await redis.quit();
    }
  });
});

describe('Basic credentials', () => {
  const { entry } = keyNew([
    '--basic',
    '--username',
    'alice',
    '--password',
    'pw-alice',
    '--permissions',
    'read',
  ]);
  const creds = () =>
    loadCredentials(
      loadConfig({ SVC_API_KEYS: JSON.stringify({ users: [entry] }), SVC_PROTECTED_MODE: 'true' }),
    );
  const req = (authorization: string) =>
    ({ headers: { authorization }, socket: { remoteAddress: '127.0.0.1' }, ip: '127.0.0.1' }) as never;

  test('when many unknown ones come at once, then only a few hash and the rest are refused with 503 at once', async () => {
    const c = creds();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => identify(req(basicAuth(`guess${i}`, 'x')), c)),
    );
    const statuses = outcomes.map((o) =>
      o.status === 'rejected' ? (o.reason as { status: number }).status : 200,
    );
    expect(statuses.filter((s) => s === 401)).toHaveLength(SCRYPT_MAX_CONCURRENT);
    expect(statuses.filter((s) => s === 503)).toHaveLength(10 - SCRYPT_MAX_CONCURRENT);
  });

  test('when a refused one is sent again, then it is refused from memory, and the right one still works', async () => {
    const c = creds();
    const wrong = basicAuth('alice', 'wrong');
    await expect(identify(req(wrong), c)).rejects.toMatchObject({ status: 401 });
    expect(c.refusedBasic.size).toBe(1);
    await expect(identify(req(wrong), c)).rejects.toMatchObject({ status: 401 });
    await expect(identify(req(basicAuth('alice', 'pw-alice')), c)).resolves.toMatchObject({
      id: 'alice',
    });
  });
});

describe('a tenant prefix', () => {
  test('when it does not end with a delimiter, then the start is refused naming the rule', () => {
    const keys = JSON.stringify({ keys: [apiKey('t', ['read'], 'tenant-a')] });
    expect(() => loadCredentials(loadConfig({ SVC_API_KEYS: keys }))).toThrow(/ending with a delimiter/);
  });

  test.each(['tenant-a:', 'tenant-a.', 'tenant-a-', 'tenant_a_'])(
    'when it is %s, then it is accepted',
    (prefix) => {
      const keys = JSON.stringify({ keys: [apiKey('t', ['read'], prefix)] });
      expect(loadCredentials(loadConfig({ SVC_API_KEYS: keys })).keys[0]?.principal.prefix).toBe(prefix);
    },
  );
});

describe('IPv6 clients', () => {
  test('when two addresses share a /64, then they count as one client; another /64 is another', () => {
    const network = clientNetworks(64);
    expect(network('2001:db8:1:2::1')).toBe(network('2001:db8:1:2:ffff:ffff:ffff:9'));
    expect(network('2001:db8:1:3::1')).not.toBe(network('2001:db8:1:2::1'));
    expect(network('10.1.2.3')).toBe('10.1.2.3');
    expect(network('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(clientNetworks(128)('2001:db8::1')).not.toBe(clientNetworks(128)('2001:db8::2'));
  });
});

describe('key listing', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp('hardening-keys');
    const pipeline = t.raw.pipeline();
    for (let i = 0; i < 400; i++) pipeline.set(`${t.prefix}hard:${i}`, 'v');
    await pipeline.exec();
  });
  afterAll(() => t.close());

  test.each([1, 3, 7])(
    'when limit is %i, then no page holds more, and the walk still lists every key once',
    async (limit) => {
      const seen: string[] = [];
      let cursor = '';
      for (let pages = 0; pages < 2000; pages++) {
        const res = await request(t.data).get('/store/keys').query({ prefix: 'hard:', limit, cursor });
        expect(res.status).toBe(200);
        expect(res.body.keys.length).toBeLessThanOrEqual(limit);
        seen.push(...res.body.keys.map((k: { key: string }) => k.key));
        if (res.body.complete) break;
        cursor = res.body.cursor;
      }
      expect(new Set(seen).size).toBe(400);
    },
  );

  test('when a forged cursor resumes a SCAN reply, then only keys inside the tenant prefix are listed', async () => {
    const tenant = apiKey('tenant', ['read'], 'hard:');
    const keyed = await testApp('hardening-keys', { SVC_API_KEYS: JSON.stringify({ keys: [tenant] }) });
    try {
      await keyed.raw.mset(`${keyed.prefix}other:1`, 'v', `${keyed.prefix}hard:5`, 'v');
      const resume = { count: 1000, last: 'AAAAAAAA' };
      const forged = encodeCursor({ node: 0, cursor: '0', resume });
      expect(decodeCursor(forged).resume).toEqual(resume);
      const res = await request(keyed.data)
        .get('/store/keys')
        .set('Authorization', bearer(tenant))
        .query({ cursor: forged, limit: 2 });
      expect(res.status).toBe(200);
      const keys = res.body.keys.map((k: { key: string }) => k.key);
      expect(keys).not.toContain('other:1');
      expect(keys.every((k: string) => k.startsWith('hard:'))).toBe(true);
    } finally {
      await keyed.close();
    }
  });
});

describe('a long-poll of a tenant', () => {
  test('when only another tenant writes, then its next names none of their events', async () => {
    const a = apiKey('a', ['read', 'write'], 'a:');
    const b = apiKey('b', ['read', 'write'], 'b:');
    const t = await feedApp('hardening-poll', 15, { SVC_API_KEYS: JSON.stringify({ keys: [a, b] }) });
    try {
      const poll = (since?: string) =>
        request(t.data)
          .get('/store/changes')
          .set('Authorization', bearer(a))
          .query(since ? { since } : {});
      await request(t.data).post('/store/string/a:mine').set('Authorization', bearer(a)).send({ value: 'v' });
      const start = (await poll()).body.next;
      const theirs: string[] = [];
      for (let i = 0; i < 5; i++)
        await request(t.data)
          .post(`/store/string/b:k${i}`)
          .set('Authorization', bearer(b))
          .send({ value: 'v' });
      const all = await t.raw.xrange(streamOf(t), '-', '+');
      theirs.push(...all.map(([id]) => id));
      const page = (await poll(start)).body;
      expect(page.events).toEqual([]);
      expect(theirs).not.toContain(page.next);
      expect(compareIds(page.next, start)).toBeGreaterThanOrEqual(0);
      await request(t.data)
        .post('/store/string/a:later')
        .set('Authorization', bearer(a))
        .send({ value: 'v' });
      const mine = (await poll(page.next)).body;
      expect(mine.events.map((e: { key: string }) => e.key)).toEqual(['a:later']);
    } finally {
      await t.close();
    }
  });
});
