// Idempotency-Key on the error paths: a timed-out write leaves no claim "in use", a refused batch is recorded as refused.
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { type RedisServer, startRedisServer } from './support/redis-server';

let server: RedisServer;
let t: TestApp;
/** A client of this test's Redis (the app's `raw` is the harness's). */
let redis: Redis;
beforeAll(async () => {
  // A Redis of its own: the test makes it hang (DEBUG SLEEP).
  server = await startRedisServer({ args: ['--enable-debug-command', 'yes'] });
  t = await testApp('idem-errors', {
    SVC_REDIS_URL: server.url,
    SVC_MAX_REPLY_ELEMENTS: '2000',
    SVC_MAX_REPLY_BYTES: '100000',
  });
  redis = new Redis(server.url);
});
afterAll(async () => {
  redis.disconnect();
  await t.close();
  await server.stop();
});

const api = () => request(t.data);
const raw = (key: string) => `${t.prefix}${key}`;

/** Polls until `check` holds; fails after `ms` (generous: the machine is shared). */
async function until(check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('when a write times out (503) while Redis hangs, then its retry with the same key runs once, not 409 in use', async () => {
  // The scripts loaded first (a fresh Redis would answer the claim NOSCRIPT after the hang, and it would never run):
  // a push onto a string is a recorded 409 wrong_type, and its error reply sends the release too.
  await redis.set(raw('idem-err-s'), 'x');
  const warm = await api()
    .post('/store/list/idem-err-s/push')
    .set('Idempotency-Key', randomUUID())
    .send({ values: ['a'] });
  expect(warm.status).toBe(409);

  const key = randomUUID();
  const push = () =>
    api()
      .post('/store/list/idem-err-l/push')
      .set('Idempotency-Key', key)
      .send({ values: ['job'] });
  const blocker = new Redis(server.url);
  try {
    const sleeping = blocker.call('DEBUG', 'SLEEP', '3').catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The claim is not answered within SVC_REDIS_COMMAND_TIMEOUT_MS: 503, outcome unknown to the client.
    const first = await push();
    expect(first.status).toBe(503);
    await sleeping;
  } finally {
    blocker.disconnect();
  }
  await until(async () => (await api().get('/store/list/idem-err-l/length')).status !== 503);
  // The claim ran once Redis woke up, and the release sent after it ended it: the retry runs the push.
  const retry = await push();
  expect(retry.status).toBe(201);
  expect(retry.headers['idempotent-replayed']).toBeUndefined();
  const again = await push();
  expect(again.status).toBe(201);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(await redis.lrange(raw('idem-err-l'), 0, -1)).toEqual(['job']);
});

test('when a batch is refused by the reply budget (413), then nothing ran and a retry replays the 413, never a success', async () => {
  await redis.set(raw('idem-ten-k'), 'x'.repeat(10_000));
  const operations = [
    { type: 'set', key: 'idem-written', value: 'v' },
    ...Array.from({ length: 20 }, () => ({ type: 'get', key: 'idem-ten-k' })),
  ];
  const key = randomUUID();
  const send = () => api().post('/store/string/batch').set('Idempotency-Key', key).send({ operations });
  const first = await send();
  expect(first.status).toBe(413);
  expect(first.body.error).toBe('reply_too_large');
  const retry = await send();
  expect(retry.status).toBe(413);
  expect(retry.body.error).toBe('reply_too_large');
  expect(retry.headers['idempotent-replayed']).toBe('true');
  expect(await redis.exists(raw('idem-written'))).toBe(0);
  // Not stuck in flight either: the same key with another request is a mismatch (422), not 409 in use.
  const other = await api()
    .post('/store/string/batch')
    .set('Idempotency-Key', key)
    .send({ operations: [{ type: 'set', key: 'idem-written', value: 'v' }] });
  expect(other.status).toBe(422);
  expect(other.body.error).toBe('idempotency_key_mismatch');
});
