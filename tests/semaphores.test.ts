// Semaphores: N holders of one name, owner and fencing tokens, renew and release only with the token, waiting.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { started, until } from './support/until';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('semaphores');
});
afterAll(async () => {
  const internal = await t.raw.keys(`#svc:sem:{${t.prefix}*`);
  if (internal.length) await t.raw.del(...internal);
  await t.close();
});

const post = (path: string, body: object) =>
  request(t.data).post(path).set('Content-Type', 'application/json').send(body);
const acquire = (name: string, body: object) => post(`/store/semaphores/${name}/acquire`, body);
const release = (name: string, token: string) => post(`/store/semaphores/${name}/release`, { token });
const status = async (name: string) => (await request(t.data).get(`/store/semaphores/${name}`)).body;

test('when N places are taken, then the next acquire is 409 lock_held, and each holder has its own growing fence', async () => {
  const grants = [];
  for (let i = 0; i < 3; i++) grants.push(await acquire('s:a', { limit: 3, ttl_ms: 30_000 }));
  expect(grants.map((g) => g.status)).toEqual([200, 200, 200]);
  const fences = grants.map((g) => g.body.fence as number);
  expect([...fences].sort((a, b) => a - b)).toEqual(fences);
  expect(new Set(fences).size).toBe(3);
  const full = await acquire('s:a', { limit: 3, ttl_ms: 30_000 });
  expect(full.status).toBe(409);
  expect(full.body).toMatchObject({ error: 'lock_held', details: { holders: 3 } });
  expect(await status('s:a')).toMatchObject({ holders: 3, fence: fences[2] });
  expect((await release('s:a', grants[1]?.body.token)).status).toBe(200);
  expect((await release('s:a', grants[1]?.body.token)).body.error).toBe('lock_lost');
  expect((await acquire('s:a', { limit: 3, ttl_ms: 30_000 })).body.fence).toBeGreaterThan(
    fences[2] as number,
  );
});

test('when a holder lets its TTL run out, then its place is free again and its token can neither renew nor release', async () => {
  const old = await acquire('s:b', { limit: 1, ttl_ms: 50 });
  await until(async () => (await status('s:b')).holders === 0);
  expect((await acquire('s:b', { limit: 1, ttl_ms: 30_000 })).status).toBe(200);
  expect(
    (await post('/store/semaphores/s:b/renew', { token: old.body.token, ttl_ms: 1000 })).body.error,
  ).toBe('lock_lost');
  expect((await release('s:b', old.body.token)).body.error).toBe('lock_lost');
});

test('when renewed, then the place lasts the new TTL', async () => {
  const { body } = await acquire('s:c', { limit: 2, ttl_ms: 1000 });
  const res = await post('/store/semaphores/s:c/renew', { token: body.token, ttl_ms: 60_000 });
  expect(res.body).toMatchObject({ renewed: true, fence: body.fence });
  expect((await status('s:c')).next_expiry_ms).toBeGreaterThan(1000);
});

test('when an acquire waits on a full semaphore, then a release lets it in', async () => {
  const held = await acquire('s:w', { limit: 1, ttl_ms: 60_000 });
  const waiting = started(acquire('s:w', { limit: 1, ttl_ms: 10_000, wait_ms: 30_000 }));
  await until(() => t.context.locks.waiters === 1);
  await release('s:w', held.body.token);
  const res = await waiting;
  expect(res.status).toBe(200);
  expect(res.body.fence).toBeGreaterThan(held.body.fence);
});

test('when limit is missing or out of range, then 400 and nothing is taken', async () => {
  expect((await acquire('s:bad', { ttl_ms: 1000 })).body.error).toBe('invalid_request');
  expect((await acquire('s:bad', { limit: 0, ttl_ms: 1000 })).body.error).toBe('invalid_request');
  expect(await status('s:bad')).toEqual({ name: 's:bad', holders: 0, fence: null, next_expiry_ms: null });
});
