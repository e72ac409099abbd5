// Heavy requests run a few at a time (src/http/admission.ts): the rest wait in arrival order, unread, and every one
// is answered: by its route when its turn comes, with 503 when it cannot get one in time.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Redis from 'ioredis';
import request from 'supertest';
import { admission, HEAVY_AT_ONCE } from '../src/http/admission';
import { type TestApp, testApp } from './support/app';
import { type RedisServer, startRedisServer } from './support/redis-server';

/** An app whose route holds each request until the test lets it go; `started` lists what reached the route. */
async function parkingApp(limit: number, maxWaitMs: number) {
  const started: string[] = [];
  const parked = new Map<string, () => void>();
  const app = express();
  const clientOf = (req: express.Request) => String(req.headers['x-client'] ?? 'one');
  app.post(
    '/heavy/:id',
    admission(limit, () => maxWaitMs, clientOf),
    (req, res) => {
      started.push(req.params.id as string);
      parked.set(req.params.id as string, () => res.end('done'));
    },
  );
  app.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(503).end(err.message);
  });
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const send = (id: string, client = 'one') => {
    const headers = { 'x-client': client };
    const req = http.request({
      port,
      host: '127.0.0.1',
      method: 'POST',
      path: `/heavy/${id}`,
      agent: false,
      headers,
    });
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req.on('response', (res) => {
        let body = '';
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode as number, body }));
      });
      req.on('error', reject);
    });
    req.end();
    return { req, answer };
  };
  const until = async (check: () => boolean) => {
    while (!check()) await new Promise((r) => setTimeout(r, 10));
  };
  return { started, parked, send, until, close: () => new Promise((r) => server.close(r)) };
}

test('when more heavy requests arrive than run at once, then the others wait and start in arrival order', async () => {
  const p = await parkingApp(2, 60_000);
  const answers = ['a', 'b', 'c', 'd'].map((id) => p.send(id).answer);
  await p.until(() => p.started.length === 2);
  // Given time to arrive, c and d still wait: only two run at once.
  await new Promise((r) => setTimeout(r, 200));
  expect(p.started).toEqual(['a', 'b']);
  p.parked.get('b')?.();
  await p.until(() => p.started.length === 3);
  expect(p.started).toEqual(['a', 'b', 'c']);
  p.parked.get('a')?.();
  p.parked.get('c')?.();
  await p.until(() => p.started.length === 4);
  p.parked.get('d')?.();
  expect((await Promise.all(answers)).map((a) => a.body)).toEqual(['done', 'done', 'done', 'done']);
  await p.close();
});

test("when one client floods the line, then another client's request waits for one turn of it, not all", async () => {
  const p = await parkingApp(1, 60_000);
  const answers = ['a1', 'a2', 'a3', 'a4'].map((id) => p.send(id, 'a').answer);
  await p.until(() => p.started.length === 1);
  // a2-a4 are waiting before b1 arrives.
  await new Promise((r) => setTimeout(r, 200));
  answers.push(p.send('b1', 'b').answer);
  await new Promise((r) => setTimeout(r, 200));
  for (let n = 1; n <= 4; n++) {
    p.parked.get(p.started[n - 1] as string)?.();
    await p.until(() => p.started.length === n + 1);
  }
  p.parked.get(p.started[4] as string)?.();
  expect(p.started).toEqual(['a1', 'a2', 'b1', 'a3', 'a4']);
  expect((await Promise.all(answers)).every((a) => a.body === 'done')).toBe(true);
  await p.close();
});

test('when a waiting client leaves, then it gives up its place and never reaches the route', async () => {
  const p = await parkingApp(1, 60_000);
  const first = p.send('first');
  await p.until(() => p.started.length === 1);
  const leaving = p.send('leaving');
  leaving.answer.catch(() => {});
  const staying = p.send('staying');
  await new Promise((r) => setTimeout(r, 100));
  leaving.req.destroy();
  await new Promise((r) => setTimeout(r, 100));
  p.parked.get('first')?.();
  await p.until(() => p.started.length === 2);
  expect(p.started).toEqual(['first', 'staying']);
  p.parked.get('staying')?.();
  expect((await staying.answer).body).toBe('done');
  expect((await first.answer).body).toBe('done');
  await p.close();
});

test('when a request cannot get its turn within the wait limit, then it is refused and the route never runs', async () => {
  const p = await parkingApp(1, 200);
  const first = p.send('first');
  await p.until(() => p.started.length === 1);
  const late = await p.send('late').answer;
  expect(late.status).toBe(503);
  expect(late.body).toMatch(/waiting for Redis; retry shortly/);
  p.parked.get('first')?.();
  expect((await first.answer).status).toBe(200);
  // Its turn, refused, was not taken: the next request runs at once.
  const next = p.send('next');
  await p.until(() => p.started.length === 2);
  p.parked.get('next')?.();
  expect((await next.answer).body).toBe('done');
  expect(p.started).toEqual(['first', 'next']);
  await p.close();
});

describe('the service', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp('admission');
  });
  afterAll(async () => {
    await t.close();
  });

  test('when three times as many batches as run at once arrive together, then every one is answered and applied', async () => {
    const batches = Array.from({ length: 3 * HEAVY_AT_ONCE }, (_, b) => ({
      operations: Array.from({ length: 10 }, (_, i) => ({
        type: 'set',
        key: `adm:${b}:${i}`,
        value: `${b}.${i}`,
      })),
    }));
    const server = http.createServer(t.data);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const answers = await Promise.all(
        batches.map((body) => request(server).post('/store/string/batch').send(body)),
      );
      expect(answers.map((a) => a.status)).toEqual(batches.map(() => 200));
      const stored = await t.raw.mget(
        batches.flatMap((_, b) => [`${t.prefix}adm:${b}:0`, `${t.prefix}adm:${b}:9`]),
      );
      expect(stored).toEqual(batches.flatMap((_, b) => [`${b}.0`, `${b}.9`]));
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('with Redis hung', () => {
  let redis: RedisServer;
  let t: TestApp;
  beforeAll(async () => {
    redis = await startRedisServer({ args: ['--enable-debug-command', 'yes'] });
    t = await testApp('admission-hung', { SVC_REDIS_URL: redis.url, SVC_REDIS_COMMAND_TIMEOUT_MS: '300' });
  });
  afterAll(async () => {
    await t.close();
    await redis.stop();
  });

  test('when batches wait on a hung Redis, then all are refused with 503 and the turns come back after it answers', async () => {
    const blocker = new Redis(redis.url);
    const sleeping = blocker.call('DEBUG', 'SLEEP', '2').catch(() => undefined);
    await new Promise((r) => setTimeout(r, 100));
    const batch = { operations: [{ type: 'set', key: 'hung', value: 'x' }] };
    const server = http.createServer(t.data);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const answers = await Promise.all(
        Array.from({ length: HEAVY_AT_ONCE + 4 }, () =>
          request(server).post('/store/string/batch').send(batch),
        ),
      );
      for (const a of answers) {
        expect(a.status).toBe(503);
        expect(a.body).toMatchObject({ error: 'service_unavailable', status: 503 });
        expect(a.headers['retry-after']).toBeDefined();
      }
      await sleeping;
      blocker.disconnect();
      // Every turn was given back: more batches than run at once succeed now.
      const again = await Promise.all(
        Array.from({ length: HEAVY_AT_ONCE + 4 }, () =>
          request(server).post('/store/string/batch').send(batch),
        ),
      );
      expect(again.map((a) => a.status)).toEqual(again.map(() => 200));
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
