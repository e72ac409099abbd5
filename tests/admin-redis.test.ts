// Admin endpoints against a Redis of their own: health during an outage, flush of a whole database.
import Redis from 'ioredis';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { type RedisServer, startRedisServer } from './support/redis-server';
import { expectSchema } from './support/schemas';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(() => server.stop());

/** Polls until `check` passes; generous, since a reconnect on a busy machine can take a while. */
async function eventually(check: () => Promise<void>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

describe('health while Redis is down', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp('health-outage', { SVC_REDIS_URL: server.url });
  });
  afterAll(() => t.close());

  test('when Redis stops, then 503 unhealthy with the health body; when it is back, then 200 again', async () => {
    expect((await request(t.data).get('/store/admin/health')).status).toBe(200);
    await server.stop();
    try {
      const down = await request(t.data).get('/store/admin/health');
      expect(down.status).toBe(503);
      expect(down.headers['retry-after']).toBe('1');
      expectSchema('HealthResponse', down.body);
      expect(down.body).toMatchObject({
        status: 'unhealthy',
        database: { status: 'disconnected', type: 'standalone', latency: null },
        memory: null,
      });
      expect((await request(t.data).get('/store/admin/ping')).status).toBe(200);
      const stats = await request(t.data).get('/store/admin/stats');
      expect(stats.body.database.connection_pool.active).toBe(0);
      expect(stats.body.errors.by_type.service_unavailable).toBe(1);
    } finally {
      await server.start();
    }
    await eventually(async () => {
      expect((await request(t.data).get('/store/admin/health')).status).toBe(200);
    });
  });

  test('when Redis is down, then memory and flush answer 503 service_unavailable', async () => {
    await server.stop();
    try {
      const memory = await request(t.data).get('/store/admin/memory/k');
      expect(memory.status).toBe(503);
      expect(memory.body.error).toBe('service_unavailable');
      expect(
        (await request(t.data).post('/store/admin/flush').set('Content-Type', 'application/json')).status,
      ).toBe(503);
    } finally {
      await server.start();
    }
    await eventually(async () => {
      expect((await request(t.data).get('/store/admin/health')).status).toBe(200);
    });
  });
});

describe('flush without a key prefix', () => {
  test('when flushed, then its database is empty, keys_removed counts the keys, and other databases stay', async () => {
    const t = await testApp('flush-all', { SVC_REDIS_URL: `${server.url}/0`, SVC_KEY_PREFIX: '' });
    try {
      await t.redis.flushdb();
      await request(t.data).post('/store/string/a').send({ value: '1' });
      await request(t.data).post('/store/string/b').send({ value: '2' });
      await t.redis.sadd('c', 'm');
      const other = new Redis(`${server.url}/1`);
      await other.set('in-db-1', 'keep');
      const res = await request(t.data).post('/store/admin/flush').set('Content-Type', 'application/json');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, message: 'Database flushed', keys_removed: 3 });
      expect(await t.redis.dbsize()).toBe(0);
      expect(await other.get('in-db-1')).toBe('keep');
      await other.quit();
    } finally {
      await t.close();
    }
  });
});

describe('when Redis refuses part of a flush', () => {
  // FLUSHDB renamed away, and a user whose ACL denies UNLINK: refusals that no retry cures.
  let strict: RedisServer;
  let admin: Redis;
  beforeAll(async () => {
    strict = await startRedisServer({ args: ['--rename-command', 'FLUSHDB', ''] });
    admin = new Redis(strict.url);
    await admin.call('ACL', 'SETUSER', 'app', 'on', '>app-password', '~*', '&*', '+@all', '-unlink');
  });
  afterAll(async () => {
    admin.disconnect();
    await strict.stop();
  });

  test('when FLUSHDB is disabled, then flush is 501 command_refused naming it, and nothing is removed', async () => {
    const t = await testApp('flush-refused', { SVC_REDIS_URL: strict.url, SVC_KEY_PREFIX: '' });
    const error = jest.spyOn(t.context.logger, 'error');
    try {
      await admin.set('flush-refused:a', '1');
      const res = await request(t.data).post('/store/admin/flush').set('Content-Type', 'application/json');
      expect(res.status).toBe(501);
      expect(res.body.error).toBe('command_refused');
      expect(res.body.message).toBe('Flush incomplete: Redis refused FLUSHDB (ERR); nothing was removed');
      expect(await admin.exists('flush-refused:a')).toBe(1);
      // Not a bug of the service: logged as a warning with its cause, not as an error with a stack.
      expect(error).not.toHaveBeenCalled();
    } finally {
      error.mockRestore();
      await t.close();
    }
  });

  test('when UNLINK is denied, then a prefix flush is 501 naming it, and the keys stay', async () => {
    const url = `redis://app:app-password@127.0.0.1:${strict.port}`;
    const t = await testApp('unlink-refused', { SVC_REDIS_URL: url });
    try {
      for (const key of ['a', 'b'])
        expect((await request(t.data).post(`/store/string/${key}`).send({ value: '1' })).status).toBe(201);
      const res = await request(t.data).post('/store/admin/flush').set('Content-Type', 'application/json');
      expect(res.status).toBe(501);
      expect(res.body.message).toBe('Flush incomplete: Redis refused UNLINK (NOPERM); nothing was removed');
      expect(await admin.exists(`${t.prefix}a`, `${t.prefix}b`)).toBe(2);
    } finally {
      await admin.del(`${t.prefix}a`, `${t.prefix}b`);
      await t.close();
    }
  });
});
