// When Redis goes away the service answers 503 quickly, and it serves again by itself when Redis is back.
import type { AddressInfo } from 'node:net';
import Redis from 'ioredis';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { type RedisServer, startRedisServer } from './support/redis-server';

let server: RedisServer;
let t: TestApp;
beforeAll(async () => {
  server = await startRedisServer({ args: ['--enable-debug-command', 'yes'] });
  t = await testApp('outage', { SVC_REDIS_URL: server.url });
});
afterAll(async () => {
  await server.start();
  await t.close();
  await server.stop();
});

const waitFor = async (check: () => Promise<boolean>, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
};

test('when Redis stops, then requests get 503 service_unavailable with retry_after, then recover', async () => {
  await request(t.data).post('/store/string/k').send({ value: 'before' }).expect(201);

  await server.stop();
  const started = Date.now();
  const res = await request(t.data).get('/store/string/k');
  const elapsed = Date.now() - started;
  expect(res.status).toBe(503);
  expect(res.body).toMatchObject({
    error: 'service_unavailable',
    status: 503,
    retry_after: expect.any(Number),
  });
  expect(res.headers['retry-after']).toBeDefined();
  expect(JSON.stringify(res.body)).not.toContain(String(server.port));
  expect(elapsed).toBeLessThan(2000); // typically a few milliseconds: no connection, no queue

  const writes = await request(t.data).post('/store/string/k').send({ value: 'during' });
  expect(writes.status).toBe(503);
  const pipeline = await request(t.data)
    .post('/upstash/pipeline')
    .send([
      ['SET', 'k', 'during'],
      ['GET', 'k'],
    ]);
  expect(pipeline.status).toBe(503);
  expect(pipeline.headers['retry-after']).toBeDefined();

  await server.start();
  const recovered = await waitFor(async () => (await request(t.data).get('/store/string/k')).status !== 503);
  expect(recovered).toBe(true);
  const after = await request(t.data).get('/store/string/k');
  expect(after.status).toBe(404); // the throwaway server keeps nothing
});

test('when Redis hangs, then a request gets 503 after the command timeout instead of waiting', async () => {
  const blocker = new Redis(server.url);
  const sleeping = blocker.call('DEBUG', 'SLEEP', '3').catch(() => undefined);
  await new Promise((r) => setTimeout(r, 100));
  const res = await request(t.data).get('/store/string/k');
  expect(res.status).toBe(503);
  await sleeping;
  blocker.disconnect();
  expect(await waitFor(async () => (await request(t.data).get('/store/string/k')).status !== 503)).toBe(true);
});

test('when Redis hangs, then an /upstash pipeline gets 503 rather than waiting for it', async () => {
  const pipeline = [
    ['SET', 'u1', 'a'],
    ['GET', 'u1'],
    ['INCR', 'u2'],
  ];
  await request(t.data).post('/upstash/pipeline').send(pipeline).expect(200);
  const blocker = new Redis(server.url);
  const sleeping = blocker.call('DEBUG', 'SLEEP', '3').catch(() => undefined);
  await new Promise((r) => setTimeout(r, 100));
  const res = await request(t.data).post('/upstash/pipeline').send(pipeline);
  expect(res.status).toBe(503);
  expect(res.body).toEqual({ error: expect.any(String) });
  expect(res.headers['retry-after']).toBeDefined();
  await sleeping;
  blocker.disconnect();
});

test('when Redis hangs with rate limits on, then the limiter gives up early and the 503 still comes within 2 s', async () => {
  const limited = await testApp('outage-limited', {
    SVC_REDIS_URL: server.url,
    SVC_RATE_LIMIT_ENABLED: 'true',
  });
  try {
    await request(limited.data).get('/store/string/k').expect(404); // the limiter's scripts are loaded
    const blocker = new Redis(server.url);
    const sleeping = blocker.call('DEBUG', 'SLEEP', '4').catch(() => undefined);
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    const res = await request(limited.data).get('/store/string/k');
    const elapsed = Date.now() - started;
    expect(res.status).toBe(503);
    expect(elapsed).toBeLessThan(2000); // the command timeout (1 s) plus the limiter's 250 ms
    await sleeping;
    blocker.disconnect();
  } finally {
    await limited.close();
  }
});

test('when Redis hangs under load, then every request still gets its 503 within about one command timeout', async () => {
  // ioredis sends an auto-pipeline only after the previous one is answered: without the service's own deadline,
  // a request issued behind a hung pipeline waited for that pipeline's timeout and then for its own.
  const http = t.data.listen(0, '127.0.0.1');
  await new Promise((resolve) => http.once('listening', resolve));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const sleeper = new Redis(server.url);
  let hangStarted = 0;
  let stop = false;
  const slowest: number[] = [];
  const loops = Array.from({ length: 16 }, async () => {
    for (const until = Date.now() + 20_000; !stop && Date.now() < until; ) {
      const started = Date.now();
      const res = await fetch(`${base}/store/string/k`, { signal: AbortSignal.timeout(10_000) });
      await res.arrayBuffer();
      if (hangStarted && started > hangStarted) slowest.push(Date.now() - started);
    }
  });
  try {
    await new Promise((r) => setTimeout(r, 300));
    const sleeping = sleeper.call('DEBUG', 'SLEEP', '3').catch(() => undefined);
    hangStarted = Date.now();
    await new Promise((r) => setTimeout(r, 2500));
    stop = true;
    await Promise.all(loops);
    await sleeping;
  } finally {
    stop = true;
    sleeper.disconnect();
    http.closeAllConnections();
    http.close();
  }
  expect(slowest.length).toBeGreaterThan(0);
  expect(Math.max(...slowest)).toBeLessThan(1800); // the command timeout is 1000 ms; two would be 2000
});
