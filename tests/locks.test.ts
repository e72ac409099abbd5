// Locks: owner and fencing tokens, renew and release only with the token, waiting acquires, tenancy, bad input.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { apiKey, bearer } from './support/auth';
import { started, until } from './support/until';

const tenant = apiKey('tenant', ['read', 'write'], 'tenant-a:');
const reader = apiKey('reader', ['read']);
const owner = apiKey('owner', ['read', 'write']);
const admin = apiKey('admin', ['admin']);
let t: TestApp;
beforeAll(async () => {
  t = await testApp('locks', { SVC_API_KEYS: JSON.stringify({ keys: [tenant, reader, owner, admin] }) });
});
afterAll(async () => {
  const internal = await t.raw.keys(`#svc:lock:{${t.prefix}*`);
  if (internal.length) await t.raw.del(...internal);
  await t.close();
});

const as = (key: typeof owner, req: request.Test) => req.set('Authorization', bearer(key));
const post = (path: string, body: object, key = owner) => as(key, request(t.data).post(path)).send(body);
const acquire = (name: string, body: object, key = owner) => post(`/store/locks/${name}/acquire`, body, key);
const release = (name: string, token: string) => post(`/store/locks/${name}/release`, { token });
const renew = (name: string, token: string, ttl_ms: number) =>
  post(`/store/locks/${name}/renew`, { token, ttl_ms });
const status = (name: string, key = owner) => as(key, request(t.data).get(`/store/locks/${name}`));

describe('a free lock', () => {
  test('when acquired, then it answers an owner token, a fencing token and the expiry, and status shows the holder', async () => {
    const res = await acquire('job:a', { ttl_ms: 10_000 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ acquired: true, name: 'job:a', ttl_ms: 10_000 });
    expect(res.body.token).toMatch(new RegExp(`^${res.body.fence}\\.[A-Za-z0-9_-]+$`));
    expect(Date.parse(res.body.expires_at)).toBeGreaterThan(Date.now());
    const held = await status('job:a');
    expect(held.body).toMatchObject({ name: 'job:a', held: true, fence: res.body.fence });
    expect(held.body.ttl_ms).toBeGreaterThan(0);
    expect(JSON.stringify(held.body)).not.toContain(res.body.token);
  });

  test('when acquired while held, then 409 lock_held with the holder fence and Retry-After, and the holder keeps it', async () => {
    const first = await acquire('job:b', { ttl_ms: 30_000 });
    const second = await acquire('job:b', { ttl_ms: 30_000 });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ error: 'lock_held', details: { fence: first.body.fence } });
    expect(Number(second.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await renew('job:b', first.body.token, 30_000)).status).toBe(200);
  });
});

describe('the owner token', () => {
  test('when a lock is released with it, then the lock is free and the same token is 409 lock_lost after', async () => {
    const { body } = await acquire('job:c', { ttl_ms: 10_000 });
    const res = await release('job:c', body.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ released: true, name: 'job:c' });
    expect((await status('job:c')).body).toEqual({
      name: 'job:c',
      held: false,
      fence: null,
      ttl_ms: null,
      expires_at: null,
    });
    const again = await release('job:c', body.token);
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('lock_lost');
    expect((await renew('job:c', body.token, 1000)).body.error).toBe('lock_lost');
  });

  test('when the lock expired and another owner took it, then the old token can neither renew nor release it', async () => {
    const old = await acquire('job:d', { ttl_ms: 50 });
    await until(async () => (await status('job:d')).body.held === false);
    const next = await acquire('job:d', { ttl_ms: 30_000 });
    expect(next.body.fence).toBeGreaterThan(old.body.fence);
    expect((await renew('job:d', old.body.token, 30_000)).status).toBe(409);
    expect((await release('job:d', old.body.token)).status).toBe(409);
    expect((await status('job:d')).body).toMatchObject({ held: true, fence: next.body.fence });
  });

  test('when renewed, then the TTL is set again and the fencing token stays', async () => {
    const { body } = await acquire('job:e', { ttl_ms: 1000 });
    const res = await renew('job:e', body.token, 60_000);
    expect(res.body).toMatchObject({ renewed: true, fence: body.fence, token: body.token, ttl_ms: 60_000 });
    expect((await status('job:e')).body.ttl_ms).toBeGreaterThan(1000);
  });
});

describe('fencing tokens', () => {
  test('when a lock is taken many times, then each fencing token is larger than the one before', async () => {
    let last = 0;
    for (let i = 0; i < 20; i++) {
      const { body } = await acquire('job:f', { ttl_ms: 10_000 });
      expect(body.fence).toBeGreaterThan(last);
      last = body.fence;
      await release('job:f', body.token);
    }
  });

  test('when the lock and its counter are deleted behind its back, then the next fencing token is still larger', async () => {
    const { body } = await acquire('job:g', { ttl_ms: 10_000 });
    const keys = t.context.keyspace.lock('job:g');
    await t.raw.del(keys.key, keys.fence);
    const next = await acquire('job:g', { ttl_ms: 10_000 });
    expect(next.body.fence).toBeGreaterThan(body.fence);
  });
});

describe('a waiting acquire', () => {
  test('when the holder releases, then the waiter gets the lock with a larger fencing token', async () => {
    const held = await acquire('job:w', { ttl_ms: 60_000 });
    const waiting = started(acquire('job:w', { ttl_ms: 10_000, wait_ms: 30_000 }));
    await until(() => t.context.locks.waiters === 1);
    await release('job:w', held.body.token);
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body.fence).toBeGreaterThan(held.body.fence);
    await until(() => t.context.locks.waiters === 0 && t.context.locks.wakeups.size === 0);
  });

  test('when the holder dies without releasing, then the waiter gets the lock once its TTL ran out', async () => {
    await acquire('job:x', { ttl_ms: 300 });
    const res = await acquire('job:x', { ttl_ms: 10_000, wait_ms: 30_000 });
    expect(res.status).toBe(200);
  });

  test('when its wait ends first, then 409 lock_held', async () => {
    await acquire('job:y', { ttl_ms: 60_000 });
    const res = await acquire('job:y', { ttl_ms: 10_000, wait_ms: 100 });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('lock_held');
  });

  test('when several wait, then each gets the lock in turn, with fencing tokens in the order granted', async () => {
    const first = await acquire('job:z', { ttl_ms: 60_000 });
    const granted: number[] = [];
    const turn = async () => {
      const res = await acquire('job:z', { ttl_ms: 60_000, wait_ms: 30_000 });
      expect(res.status).toBe(200);
      granted.push(res.body.fence);
      expect((await release('job:z', res.body.token)).status).toBe(200);
    };
    const waiting = [turn(), turn(), turn()];
    await until(() => t.context.locks.waiters === 3);
    await release('job:z', first.body.token);
    await Promise.all(waiting);
    expect(granted).toHaveLength(3);
    expect([...granted].sort((a, b) => a - b)).toEqual(granted);
    expect(granted[0]).toBeGreaterThan(first.body.fence);
  });
});

describe('permissions and tenancy', () => {
  test('when a tenant locks a name outside its prefix, then 403 and nothing is taken', async () => {
    const res = await acquire('tenant-b:job', { ttl_ms: 1000 }, tenant);
    expect(res.status).toBe(403);
    expect((await status('tenant-b:job')).body.held).toBe(false);
    expect((await acquire('tenant-a:job', { ttl_ms: 1000 }, tenant)).status).toBe(200);
  });

  test('when a read-only credential acquires, then 403; it may read the status', async () => {
    expect((await acquire('job:r', { ttl_ms: 1000 }, reader)).status).toBe(403);
    expect((await status('job:r', reader)).status).toBe(200);
  });
});

describe('bad input', () => {
  test.each([
    [{ ttl_ms: 0 }, 'invalid_ttl'],
    [{ ttl_ms: 1.5 }, 'invalid_ttl'],
    [{}, 'invalid_ttl'],
    [{ ttl_ms: 1000, wait_ms: -1 }, 'invalid_request'],
    [{ ttl_ms: 1000, wait_ms: 60_001 }, 'invalid_request'],
    [{ ttl_ms: 1000, extra: 1 }, 'invalid_request'],
  ])('when an acquire sends %j, then 400 %s and nothing is taken', async (body, error) => {
    const res = await acquire('job:bad', body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(error);
    expect((await status('job:bad')).body.held).toBe(false);
  });

  test('when a name breaks the key rule or a token is malformed, then 400', async () => {
    expect((await acquire('bad name', { ttl_ms: 1000 })).body.error).toBe('invalid_key');
    expect((await release('job:bad', 'no-dot')).body.error).toBe('invalid_request');
  });
});

describe('metrics', () => {
  test('when locks are taken, refused and lost, then svc_locks_operations_total counts each outcome', async () => {
    const { body } = await acquire('job:m', { ttl_ms: 10_000 });
    await acquire('job:m', { ttl_ms: 10_000 });
    await release('job:m', body.token);
    await release('job:m', body.token);
    const text = (await as(admin, request(t.data).get('/store/admin/metrics'))).text;
    for (const outcome of [
      'operation="acquire",outcome="ok"',
      'operation="acquire",outcome="held"',
      'operation="release",outcome="lost"',
    ])
      expect(text).toMatch(new RegExp(`svc_locks_operations_total\\{${outcome}\\} [1-9]`));
    expect(text).toMatch(/^svc_locks_waiting 0$/m);
  });
});

describe('the list of held locks', () => {
  test('when locks are held under a prefix, then the list shows them with their fences, and a tenant sees only its own', async () => {
    const a = await acquire('list:a', { ttl_ms: 60_000 });
    await acquire('list:b', { ttl_ms: 60_000 });
    await acquire('tenant-a:list', { ttl_ms: 60_000 }, tenant);
    const res = await as(owner, request(t.data).get('/store/locks?prefix=list:'));
    expect(res.status).toBe(200);
    const names = res.body.locks.map((l: { name: string }) => l.name).sort();
    // The listing makes a bounded number of SCAN calls: on the suite's shared Redis, full of other files' keys, it
    // may stop early (`complete: false`, as documented) with some of them.
    if (res.body.complete) expect(names).toEqual(['list:a', 'list:b']);
    else expect(names.every((n: string) => n === 'list:a' || n === 'list:b')).toBe(true);
    const listed = res.body.locks.find((l: { name: string }) => l.name === 'list:a');
    if (listed) expect(listed).toMatchObject({ fence: a.body.fence });
    const own = await as(tenant, request(t.data).get('/store/locks'));
    const ownNames = own.body.locks.map((l: { name: string }) => l.name);
    if (own.body.complete) expect(ownNames).toContain('tenant-a:list');
    expect(ownNames.every((n: string) => n.startsWith('tenant-a:'))).toBe(true);
    expect((await as(tenant, request(t.data).get('/store/locks?prefix=list:'))).status).toBe(403);
  });
});
