// Rate limits for callers' own use: policies, check and peek, several identifiers at once, reset, overrides, headers.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { apiKey, bearer } from './support/auth';

const tenant = apiKey('tenant', ['read', 'write'], 'tenant-a:');
const reader = apiKey('reader', ['read']);
const owner = apiKey('owner', ['read', 'write']);
let t: TestApp;
beforeAll(async () => {
  t = await testApp('ratelimits', { SVC_API_KEYS: JSON.stringify({ keys: [tenant, reader, owner] }) });
});
afterAll(async () => {
  const internal = await t.raw.keys(`#svc:quota:{${t.prefix}*`);
  if (internal.length) await t.raw.del(...internal);
  await t.close();
});

type Key = typeof owner;
const post = (path: string, body: object, key: Key = owner) =>
  request(t.data).post(path).set('Authorization', bearer(key)).send(body);
const define = (name: string, body: object, key: Key = owner) => post(`/store/ratelimits/${name}`, body, key);
const check = (name: string, body: object, key: Key = owner) =>
  post(`/store/ratelimits/${name}/check`, body, key);
const peek = (name: string, body: object, key: Key = owner) =>
  post(`/store/ratelimits/${name}/peek`, body, key);
// Windows are aligned on Redis's clock: a period this long makes a test that straddles two windows all but impossible.
const minute = { period_ms: 2_000_000_000 };

describe('a policy', () => {
  test('when defined, then 201, then 200 when replaced; it reads back and deletes', async () => {
    const first = await define('p:def', { algorithm: 'fixed_window', limit: 5, ...minute });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      success: true,
      created: true,
      name: 'p:def',
      algorithm: 'fixed_window',
      limit: 5,
      period_ms: 2_000_000_000,
      overrides: 0,
    });
    expect((await define('p:def', { algorithm: 'token_bucket', limit: 5, burst: 9, ...minute })).status).toBe(
      200,
    );
    const read = await request(t.data).get('/store/ratelimits/p:def').set('Authorization', bearer(owner));
    expect(read.body).toMatchObject({ algorithm: 'token_bucket', limit: 5, burst: 9 });
    const del = await request(t.data).delete('/store/ratelimits/p:def').set('Authorization', bearer(owner));
    expect(del.body).toEqual({ success: true, deleted: true });
    expect((await check('p:def', { identifier: 'u' })).status).toBe(404);
  });

  test('when burst is given to a window algorithm, or the algorithm is unknown, then 400 and nothing is defined', async () => {
    expect((await define('p:bad', { algorithm: 'fixed_window', limit: 5, burst: 2, ...minute })).status).toBe(
      400,
    );
    expect((await define('p:bad', { algorithm: 'leaky', limit: 5, ...minute })).status).toBe(400);
    expect((await check('p:bad', { identifier: 'u' })).body.error).toBe('not_found');
  });
});

describe('a fixed window', () => {
  test('when checked past its limit, then denied with Retry-After and the IETF headers; peek spends nothing', async () => {
    await define('p:fixed', { algorithm: 'fixed_window', limit: 3, ...minute });
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await check('p:fixed', { identifier: 'user:1' });
      expect(res.body.allowed).toBe(true);
      remaining.push(res.body.remaining);
    }
    expect(remaining).toEqual([2, 1, 0]);
    const before = await peek('p:fixed', { identifier: 'user:1' });
    expect(before.body).toMatchObject({ allowed: false, remaining: 0 });
    const denied = await check('p:fixed', { identifier: 'user:1' });
    expect(denied.status).toBe(200);
    expect(denied.body).toMatchObject({ allowed: false, policy: 'p:fixed', limit: 3, remaining: 0 });
    expect(denied.body.retry_after_ms).toBeGreaterThan(0);
    expect(Number(denied.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(denied.headers['ratelimit-policy']).toBe('"p:fixed";q=3;w=2000000');
    expect(denied.headers.ratelimit).toMatch(/^"p:fixed";r=0;t=\d+$/);
    const other = await peek('p:fixed', { identifier: 'user:2' });
    expect(other.body).toMatchObject({ allowed: true, remaining: 3 });
    expect(other.headers['retry-after']).toBeUndefined();
    expect((await peek('p:fixed', { identifier: 'user:2' })).body.remaining).toBe(3);
  });

  test('when an identifier is reset, then it has its whole quota again', async () => {
    await define('p:reset', { algorithm: 'fixed_window', limit: 1, ...minute });
    await check('p:reset', { identifier: 'u' });
    expect((await check('p:reset', { identifier: 'u' })).body.allowed).toBe(false);
    expect((await post('/store/ratelimits/p:reset/reset', { identifier: 'u' })).body).toEqual({
      success: true,
      reset: 1,
    });
    expect((await check('p:reset', { identifier: 'u' })).body.allowed).toBe(true);
  });
});

describe('several identifiers at once', () => {
  test('when one of them has no room, then none of them is spent', async () => {
    await define('p:multi', { algorithm: 'fixed_window', limit: 3, ...minute });
    await check('p:multi', { identifier: 'user:9', cost: 2 });
    const res = await check('p:multi', { identifiers: ['user:9', 'ip:10.0.0.1'], cost: 2 });
    expect(res.body.allowed).toBe(false);
    expect(res.body.identifiers).toEqual([
      expect.objectContaining({ identifier: 'user:9', allowed: false, remaining: 1 }),
      expect.objectContaining({ identifier: 'ip:10.0.0.1', allowed: true, remaining: 3 }),
    ]);
    expect(res.body).toMatchObject({ remaining: 1, limit: 3 });
    expect((await peek('p:multi', { identifier: 'ip:10.0.0.1' })).body.remaining).toBe(3);
    const both = await check('p:multi', { identifier: 'user:9', identifiers: ['ip:10.0.0.1'] });
    expect(both.body.identifiers.map((i: { remaining: number }) => i.remaining)).toEqual([0, 2]);
  });
});

describe('an override', () => {
  test('when an identifier has one, then its limit replaces the policy limit; removed, the policy applies again', async () => {
    await define('p:over', { algorithm: 'fixed_window', limit: 1, ...minute });
    const set = await post('/store/ratelimits/p:over/overrides/vip%40example.com', { limit: 3 });
    expect(set.status).toBe(201);
    const allowed = [];
    for (let i = 0; i < 4; i++)
      allowed.push((await check('p:over', { identifier: 'vip@example.com' })).body.allowed);
    expect(allowed).toEqual([true, true, true, false]);
    const del = await request(t.data)
      .delete('/store/ratelimits/p:over/overrides/vip%40example.com')
      .set('Authorization', bearer(owner));
    expect(del.body.deleted).toBe(true);
    expect((await peek('p:over', { identifier: 'vip@example.com' })).body.limit).toBe(1);
  });
});

describe('a token bucket and a sliding window', () => {
  test('when a token bucket is drained, then its burst was allowed and the next call waits for a token', async () => {
    await define('p:bucket', { algorithm: 'token_bucket', limit: 1, period_ms: 60_000, burst: 3 });
    const results = [];
    for (let i = 0; i < 4; i++) results.push((await check('p:bucket', { identifier: 'u' })).body);
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, false]);
    expect(results.map((r) => r.remaining)).toEqual([2, 1, 0, 0]);
    expect(results[3].retry_after_ms).toBeGreaterThan(50_000);
  });

  test('when a sliding window is used up, then the next call is denied', async () => {
    await define('p:slide', { algorithm: 'sliding_window', limit: 2, ...minute });
    const allowed = [];
    for (let i = 0; i < 3; i++) allowed.push((await check('p:slide', { identifier: 'u' })).body.allowed);
    expect(allowed).toEqual([true, true, false]);
  });
});

describe('permissions and tenancy', () => {
  test('when a tenant names a policy outside its prefix, then 403', async () => {
    expect(
      (await define('tenant-b:p', { algorithm: 'fixed_window', limit: 1, ...minute }, tenant)).status,
    ).toBe(403);
    expect(
      (await define('tenant-a:p', { algorithm: 'fixed_window', limit: 1, ...minute }, tenant)).status,
    ).toBe(201);
    expect((await check('tenant-a:p', { identifier: 'u' }, tenant)).body.allowed).toBe(true);
  });

  test('when a read-only credential checks, then 403; it may peek', async () => {
    await define('p:read', { algorithm: 'fixed_window', limit: 1, ...minute });
    expect((await check('p:read', { identifier: 'u' }, reader)).status).toBe(403);
    expect((await peek('p:read', { identifier: 'u' }, reader)).body.remaining).toBe(1);
  });

  test('when no identifier is given, then 400 invalid_request', async () => {
    expect((await check('p:read', { cost: 1 })).body.error).toBe('invalid_request');
    expect((await check('p:read', { identifier: 'has space' })).body.error).toBe('invalid_request');
  });
});
