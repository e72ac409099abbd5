// Queues among the rest of the service: tenant prefixes and permissions, change events, the Prometheus gauges, the
// waiter cap per client.
import Redis from 'ioredis';
import request from 'supertest';
import { eventOf } from '../src/redis/change-event';
import { createKeyspace } from '../src/redis/keys';
import { type TestApp, testApp } from './support/app';
import { apiKey, bearer } from './support/auth';
import { parseScrape, value } from './support/prometheus';
import { type RedisServer, startRedisServer } from './support/redis-server';

const tenant = apiKey('queue-tenant', ['read', 'write'], 'tenant-a:');
const reader = apiKey('queue-reader', ['read']);
const admin = apiKey('queue-admin', ['read', 'write', 'admin']);
let redis: RedisServer;
let t: TestApp;
beforeAll(async () => {
  redis = await startRedisServer();
  t = await testApp('queue-access', {
    SVC_REDIS_URL: redis.url,
    SVC_CHANGES_ENABLED: 'true',
    SVC_API_KEYS: JSON.stringify({ keys: [tenant, reader, admin] }),
    SVC_LIST_MAX_WAITERS_PER_CLIENT: '1',
  });
});
afterAll(async () => {
  await t.close();
  await redis.stop();
});

const as = (who: { key: string }, req: request.Test) =>
  req.set('Authorization', bearer(who)).set('Content-Type', 'application/json');
const api = () => request(t.data);

test('when a tenant names a queue outside its prefix, then 403 and nothing is created; its list shows only its queues', async () => {
  expect((await as(tenant, api().put('/store/queues/tenant-a:jobs')).send({})).status).toBe(201);
  const outside = await as(tenant, api().put('/store/queues/tenant-b:jobs')).send({});
  expect(outside.status).toBe(403);
  expect(outside.body.message).toContain("'tenant-b:jobs' is outside the prefix 'tenant-a:'");
  expect((await as(admin, api().put('/store/queues/other')).send({})).status).toBe(201);
  expect((await as(tenant, api().get('/store/queues'))).body.queues).toEqual(['tenant-a:jobs']);
  expect((await as(admin, api().get('/store/queues'))).body.queues).toEqual(['other', 'tenant-a:jobs']);
  expect((await as(tenant, api().post('/store/queues/other/receive')).send({})).status).toBe(403);
});

test('when a read-only credential peeks, then it may; when it receives or acks, then 403 (they are writes)', async () => {
  await as(admin, api().post('/store/queues/other/messages')).send({ body: 'x' });
  expect((await as(reader, api().get('/store/queues/other/messages'))).body.messages).toHaveLength(1);
  expect((await as(reader, api().get('/store/queues/other'))).status).toBe(200);
  for (const what of ['receive', 'ack', 'nack', 'extend', 'redrive', 'purge', 'messages'])
    expect([what, (await as(reader, api().post(`/store/queues/other/${what}`)).send({})).status]).toEqual([
      what,
      403,
    ]);
  expect((await as(reader, api().get('/store/queues/other/messages'))).body.messages).toHaveLength(1);
});

test('when queue writes happen, then the change feed holds one event each, naming the queue', async () => {
  const raw = new Redis(redis.url);
  try {
    const stream = createKeyspace(t.prefix).changes;
    const [last] = (await raw.xrevrange(stream, '+', '-', 'COUNT', 1)).map(([id]) => id);
    await as(admin, api().put('/store/queues/fed')).send({});
    await as(admin, api().post('/store/queues/fed/messages')).send({ body: 'x' });
    const got = await as(admin, api().post('/store/queues/fed/receive')).send({});
    await as(admin, api().post('/store/queues/fed/ack')).send({ receipts: [got.body.messages[0].receipt] });
    await as(admin, api().delete('/store/queues/fed'));
    const events = (await raw.xrange(stream, `(${last ?? '0-0'}`, '+')).map(([, f]) => eventOf(f));
    expect(events).toEqual(
      ['create', 'send', 'receive', 'ack', 'delete'].map((op) => ({ key: 'fed', type: 'queue', op })),
    );
  } finally {
    raw.disconnect();
  }
});

test('when metrics are scraped, then each queue has its counts as gauges', async () => {
  await as(admin, api().put('/store/queues/gauged')).send({});
  await as(admin, api().post('/store/queues/gauged/messages')).send({
    messages: [{ body: 'a' }, { body: 'b' }],
  });
  await as(admin, api().post('/store/queues/gauged/receive')).send({});
  const scraped = parseScrape((await as(admin, api().get('/store/admin/metrics'))).text);
  expect(value(scraped, 'svc_queue_messages', { queue: 'gauged', state: 'ready' })).toBe(1);
  expect(value(scraped, 'svc_queue_messages', { queue: 'gauged', state: 'in_flight' })).toBe(1);
  expect(value(scraped, 'svc_queue_oldest_ready_age_seconds', { queue: 'gauged' })).toBeGreaterThanOrEqual(0);
});

test('when a client already holds its waiting receives (SVC_LIST_MAX_WAITERS_PER_CLIENT), then another is 429; a send answers the first', async () => {
  await as(admin, api().put('/store/queues/capped')).send({});
  const first = new Promise<request.Response>((resolve, reject) =>
    as(admin, api().post('/store/queues/capped/receive')).send({ wait: 20 }).then(resolve, reject),
  );
  const pool = t.context.store.waiters as { waiting: number };
  for (let i = 0; i < 400 && pool.waiting === 0; i++) await new Promise((r) => setTimeout(r, 25));
  const second = await as(admin, api().post('/store/queues/capped/receive')).send({ wait: 20 });
  expect([second.status, second.body.error]).toEqual([429, 'rate_limit_exceeded']);
  await as(admin, api().post('/store/queues/capped/messages')).send({ body: 'for the first' });
  expect((await first).body.messages[0].body).toBe('for the first');
});
