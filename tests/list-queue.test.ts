// Lists as a work queue: waiting pops are answered by a push, two consumers get each item once, the waiter cap.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import type { WaiterPool } from '../src/redis/waiters';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('list-queue', { SVC_LIST_MAX_WAITERS: '2' });
});
afterAll(() => t.close());

const api = () => request(t.data);
const raw = (key: string) => `${t.prefix}${key}`;
const waiters = () => t.context.store.waiters as WaiterPool;
const pop = (key: string, body: object) =>
  api().post(`/store/list/${key}/pop`).set('Content-Type', 'application/json').send(body);

/** Polls until `check` holds; fails after `ms` (generous: the machine is shared), never races real time. */
async function until(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Promise of a request's response, started now (supertest sends on then()). */
const started = (req: request.Test) =>
  new Promise<request.Response>((resolve, reject) => req.then(resolve, reject));

test('when a pop waits on an empty list and an item is pushed, then the waiting pop answers it', async () => {
  const waiting = started(pop('q-one', { wait: 20 }));
  await until(() => waiters().waiting === 1);
  await api()
    .post('/store/list/q-one/push')
    .send({ values: ['job-1'] });
  const res = await waiting;
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ success: true, values: ['job-1'] });
  await until(() => waiters().waiting === 0);
});

test('when two consumers wait on one queue, then each pushed item is delivered exactly once', async () => {
  const total = 60;
  const received: string[] = [];
  let producing = true;
  const deadline = Date.now() + 60_000;
  const consumer = async () => {
    while (Date.now() < deadline) {
      const res = await pop('q-work', { wait: 1 });
      if (res.status === 200) received.push(...res.body.values);
      else if (res.status === 404 && !producing) return;
      else if (res.status !== 404) throw new Error(`pop answered ${res.status}: ${JSON.stringify(res.body)}`);
    }
  };
  const consumers = [consumer(), consumer()];
  for (let i = 0; i < total; i += 3) {
    await api()
      .post('/store/list/q-work/push')
      .send({ values: [`job-${i}`, `job-${i + 1}`, `job-${i + 2}`] });
  }
  await until(() => received.length >= total, 40_000);
  producing = false;
  await Promise.all(consumers);
  expect(received).toHaveLength(total);
  expect(new Set(received).size).toBe(total);
  expect(await t.raw.exists(raw('q-work'))).toBe(0);
}, 90_000);

test('when every waiter is busy, then one more waiting pop is 503 with Retry-After; a pop without wait still runs', async () => {
  const first = started(pop('q-cap', { wait: 20 }));
  const second = started(pop('q-cap', { wait: 20 }));
  await until(() => waiters().waiting === 2);
  const third = await pop('q-cap', { wait: 5 });
  expect(third.status).toBe(503);
  expect(third.body.error).toBe('service_unavailable');
  expect(third.headers['retry-after']).toBe('1');
  expect((await pop('q-cap', {})).status).toBe(404);
  await api()
    .post('/store/list/q-cap/push')
    .send({ values: ['a', 'b'] });
  const answers = (await Promise.all([first, second])).map((r) => r.body.values[0]).sort();
  expect(answers).toEqual(['a', 'b']);
});

test('when a waiting client goes away, then its connection is released and it takes no item', async () => {
  const server = t.data.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/store/list/q-gone/pop',
      headers: { 'content-type': 'application/json' },
    });
    req.on('error', () => {});
    req.end(JSON.stringify({ wait: 25 }));
    await until(() => waiters().waiting === 1);
    req.destroy();
    await until(() => waiters().waiting === 0);
    await api()
      .post('/store/list/q-gone/push')
      .send({ values: ['kept'] });
    expect(await t.raw.lrange(raw('q-gone'), 0, -1)).toEqual(['kept']);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test('when the service closes while a pop waits, then the pop answers 503 and close() does not wait for it', async () => {
  const other = await testApp('list-queue-close');
  let waiting: Promise<request.Response> | undefined;
  try {
    waiting = started(
      request(other.data)
        .post('/store/list/q-close/pop')
        .set('Content-Type', 'application/json')
        .send({ wait: 25 }),
    );
    await until(() => (other.context.store.waiters as WaiterPool).waiting === 1);
  } finally {
    await other.close();
  }
  expect((await waiting).status).toBe(503);
});

test('when a wait is longer than the Redis command deadline, then it is not cut short: 404 after the wait, not 503', async () => {
  const short = await testApp('list-queue-deadline', { SVC_REDIS_COMMAND_TIMEOUT_MS: '500' });
  try {
    const res = await request(short.data)
      .post('/store/list/q-long/pop')
      .set('Content-Type', 'application/json')
      .send({ wait: 1.5 });
    expect([res.status, res.body.error]).toEqual([404, 'not_found']);
  } finally {
    await short.close();
  }
});
