// The admin endpoints' shapes and units, validated against the response schemas of openapi.yaml.
import request from 'supertest';
import { redactUrl } from '../src/redis/client';
import { openapiDocument, type TestApp, testApp } from './support/app';
import { expectSchema } from './support/schemas';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('admin');
});
afterAll(() => t.close());

const api = () => request(t.data);
const raw = (key: string) => `${t.prefix}${key}`;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('ping', () => {
  test('when asked, then it answers pong with the server time, without touching Redis', async () => {
    const res = await api().get('/store/admin/ping');
    expect(res.status).toBe(200);
    expectSchema('PingResponse', res.body);
    expect(res.body).toEqual({ pong: 'pong', timestamp: expect.stringMatching(ISO) });
  });

  test('when asked under /api, then it answers the same', async () => {
    expect((await request(t.data).get('/api/admin/ping')).body.pong).toBe('pong');
  });
});

describe('health', () => {
  test('when Redis answers, then 200 healthy with latency in ms, uptime in s and memory in bytes', async () => {
    const res = await api().get('/store/admin/health');
    expect(res.status).toBe(200);
    expectSchema('HealthResponse', res.body);
    const { status, uptime, database, memory } = res.body;
    expect(status).toBe('healthy');
    expect(Number.isInteger(uptime)).toBe(true);
    expect(database).toEqual({ status: 'connected', type: 'standalone', latency: expect.any(Number) });
    expect(database.latency).toBeGreaterThanOrEqual(0);
    expect(memory.used).toBeGreaterThan(0);
    expect(memory.total).toBeGreaterThanOrEqual(memory.used);
    expect(memory.available).toBe(memory.total - memory.used);
  });
});

describe('info', () => {
  test('when asked, then it answers version, build date, config and features', async () => {
    const res = await api().get('/store/admin/info');
    expect(res.status).toBe(200);
    expectSchema('InfoResponse', res.body);
    const pkg = require('../package.json') as { version: string };
    expect(res.body.version).toBe(pkg.version);
    expect(res.body.build_date).toMatch(ISO);
    expect(res.body.config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      database_url: redactUrl(process.env.REDIS_URL as string),
      max_connections: 10000,
      rate_limit_requests: 100,
      rate_limit_window: 60,
      key_prefix: t.prefix,
    });
    expect(res.body.features).toEqual({ websocket: false, authentication: false, cors: false });
  });

  test('when the Redis URL holds a password, then info shows it redacted', async () => {
    const other = await testApp('admin-redact', { SVC_REDIS_URL: redisUrlWithPassword() });
    try {
      const res = await request(other.data).get('/store/admin/info');
      expect(res.body.config.database_url).toContain('***');
      expect(JSON.stringify(res.body)).not.toContain('s3cret-pw');
    } finally {
      await other.close();
    }
  });

  test('when the auth family reports credentials, then features.authentication is true', async () => {
    const configured = t.context.authConfigured;
    t.context.authConfigured = () => true;
    try {
      expect((await api().get('/store/admin/info')).body.features.authentication).toBe(true);
    } finally {
      t.context.authConfigured = configured;
    }
  });
});

/** The test Redis URL with a password (the default user of a Redis without requirepass accepts any). */
function redisUrlWithPassword(): string {
  const url = new URL(process.env.REDIS_URL as string);
  url.username = 'default';
  url.password = 's3cret-pw';
  return url.toString();
}

describe('clients', () => {
  test('when two user agents have called, then both are listed, most recent first, with their counts', async () => {
    await api().get('/store/string/x/exists').set('User-Agent', 'client-a/1');
    await api().get('/store/string/x/exists').set('User-Agent', 'client-a/1');
    await api().get('/store/string/x/exists').set('User-Agent', 'client-b/2');
    const res = await api().get('/store/admin/clients').set('User-Agent', 'client-b/2');
    expect(res.status).toBe(200);
    expectSchema('ClientsResponse', res.body);
    expect(res.body.total_clients).toBe(res.body.clients.length);
    const [first, second] = res.body.clients;
    expect(first).toMatchObject({
      user_agent: 'client-b/2',
      requests_count: 1,
      id: expect.stringMatching(/^[0-9a-f]{12}$/),
    });
    expect(second).toMatchObject({ user_agent: 'client-a/1', requests_count: 2 });
    expect(second.ip).toMatch(/127\.0\.0\.1/);
    expect(Date.parse(second.last_activity)).toBeGreaterThanOrEqual(Date.parse(second.connected_at));
  });

  test('when more clients than SVC_CLIENTS_MAX have called, then the least recently seen are dropped', async () => {
    const small = await testApp('admin-clients', { SVC_CLIENTS_MAX: '2' });
    try {
      for (const ua of ['one', 'two', 'one', 'three'])
        await request(small.data).get('/store/admin/ping').set('User-Agent', ua);
      const res = await request(small.data).get('/store/admin/clients').set('User-Agent', 'three');
      expect(res.body.clients.map((c: { user_agent: string }) => c.user_agent)).toEqual(['three', 'one']);
    } finally {
      await small.close();
    }
  });
});

describe('memory of a key', () => {
  test('when the key is a string, then its type, size in bytes, ttl and last access are answered', async () => {
    await api()
      .post('/store/string/mem-str')
      .send({ value: 'x'.repeat(1000), ttl: 500 });
    const res = await api().get('/store/admin/memory/mem-str');
    expect(res.status).toBe(200);
    expectSchema('KeyMemoryResponse', res.body);
    expect(res.body).toMatchObject({ key: 'mem-str', type: 'string', created_at: null });
    expect(res.body.size).toBeGreaterThan(1000);
    expect(res.body.ttl).toBeGreaterThan(400);
    expect(Math.abs(Date.parse(res.body.last_accessed) - Date.now())).toBeLessThan(60_000);
  });

  test('when another client stored a list, then its Redis type is answered', async () => {
    await t.raw.rpush(raw('mem-list'), 'a', 'b');
    const res = await api().get('/store/admin/memory/mem-list');
    expect(res.body).toMatchObject({ type: 'list', ttl: -1 });
  });

  test('when the key is missing, then 404 not_found names it', async () => {
    const res = await api().get('/store/admin/memory/mem-missing');
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
    expect(res.body.message).toContain('mem-missing');
  });

  test('when the key is invalid, then 400 invalid_key', async () => {
    expect((await api().get('/store/admin/memory/bad%20key')).body.error).toBe('invalid_key');
  });
});

describe('stats', () => {
  test('when asked, then the body has the documented shape with times in ms', async () => {
    await api().get('/store/string/stats-missing');
    const res = await api().get('/store/admin/stats');
    expect(res.status).toBe(200);
    expectSchema('StatsResponse', res.body);
    expect(res.body.database.connection_pool).toEqual({ active: 1, idle: 0, max: 1 });
  });
});

describe('flush with a key prefix', () => {
  test('when flushed, then the keys under the prefix are gone and every other key stays', async () => {
    const app = await testApp('admin-flush');
    const outside = `${t.prefix}outside-flush`;
    try {
      await request(app.data).post('/store/string/a').send({ value: '1' });
      await request(app.data).post('/store/string/b').send({ value: '2' });
      await app.raw.sadd(`${app.prefix}c`, 'm');
      await app.raw.set(outside, 'keep');
      await app.raw.set('#svc:rl:test-flush', '1');
      const res = await request(app.data).post('/store/admin/flush').set('Content-Type', 'application/json');
      expect(res.status).toBe(200);
      expectSchema('FlushResponse', res.body);
      expect(res.body).toMatchObject({ success: true, keys_removed: 3 });
      expect(res.body.message).toContain(app.prefix);
      expect(await app.raw.exists(`${app.prefix}a`, `${app.prefix}b`, `${app.prefix}c`)).toBe(0);
      expect(await app.raw.get(outside)).toBe('keep');
      expect(await app.raw.get('#svc:rl:test-flush')).toBe('1');
    } finally {
      await t.raw.del(outside, '#svc:rl:test-flush');
      await app.close();
    }
  });
});

describe('the contract', () => {
  test('every JSON example of an admin response matches its schema', () => {
    const paths = openapiDocument().paths as Record<string, Record<string, { responses: object }>>;
    let checked = 0;
    for (const [path, item] of Object.entries(paths)) {
      if (!path.startsWith('/store/admin/')) continue;
      for (const operation of Object.values(item)) {
        for (const response of Object.values(operation.responses ?? {})) {
          const json = (
            response as { content?: Record<string, { schema?: { $ref?: string }; example?: unknown }> }
          ).content?.['application/json'];
          const name = json?.schema?.$ref?.split('/').pop();
          if (!name || json?.example === undefined) continue;
          expectSchema(name, json.example);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(9);
  });
});
