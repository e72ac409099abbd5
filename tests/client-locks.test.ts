// The TypeScript client's locks and rate limits: withLock renews while fn runs, aborts fn when the lock is lost.
import { createGateway, type Gateway, GatewayError } from '../clients/typescript/src/index';
import { type Served, served } from './support/served';
import { until } from './support/until';

let s: Served;
let gw: Gateway;
beforeAll(async () => {
  s = await served('client-locks');
  gw = createGateway({ baseUrl: s.base });
});
afterAll(async () => {
  const internal = await s.t.raw.keys(`#svc:*{${s.t.prefix}*`);
  if (internal.length) await s.t.raw.del(...internal);
  await s.close();
});

test('when fn outlives the TTL, then withLock keeps renewing the lock and releases it after fn', async () => {
  let renewedPast = false;
  const result = await gw.locks.withLock(
    'c:job',
    async (signal, lock) => {
      expect(lock.fence).toBeGreaterThan(0);
      // Three TTLs pass while fn runs; the lock must still be ours at the end.
      await until(async () => {
        const status = await gw.locks.status('c:job');
        renewedPast = status.held && Date.now() > Date.parse(lock.expires_at) + 1000;
        return renewedPast;
      });
      expect(signal.aborted).toBe(false);
      return 'done';
    },
    { ttlMs: 1000 },
  );
  expect(result).toBe('done');
  expect(renewedPast).toBe(true);
  await until(async () => !(await gw.locks.status('c:job')).held);
});

test('when the lock is lost while fn runs, then fn is aborted and withLock rejects with lock_lost', async () => {
  const run = gw.locks.withLock(
    'c:lost',
    async (signal, lock) => {
      // Someone removes the lock behind the holder's back (as an expiry during a long pause would).
      await s.t.raw.del(s.t.context.keyspace.lock('c:lost').key);
      await until(() => signal.aborted);
      expect(signal.reason).toBeInstanceOf(GatewayError);
      return lock.fence;
    },
    { ttlMs: 3000, renewEveryMs: 50 },
  );
  await expect(run).rejects.toMatchObject({ error: 'lock_lost', status: 409 });
});

test('when a lock is held, then acquire fails with lock_held, and a waiting acquire gets it after the release', async () => {
  const held = await gw.locks.acquire('c:held', { ttlMs: 30_000 });
  await expect(gw.locks.acquire('c:held')).rejects.toMatchObject({ error: 'lock_held' });
  const waiting = gw.locks.acquire('c:held', { waitMs: 30_000 });
  await until(() => s.t.context.locks.waiters === 1);
  await gw.locks.release('c:held', held.token);
  expect((await waiting).fence).toBeGreaterThan(held.fence);
});

test('when a rate limit is checked through the client, then it spends, peeks and resets', async () => {
  expect(
    await gw.ratelimits.define('c:rl', { algorithm: 'fixed_window', limit: 1, period_ms: 2_000_000_000 }),
  ).toBe(true);
  expect((await gw.ratelimits.check('c:rl', 'u')).allowed).toBe(true);
  expect((await gw.ratelimits.check('c:rl', ['u', 'v'])).allowed).toBe(false);
  expect((await gw.ratelimits.peek('c:rl', 'v')).remaining).toBe(1);
  expect(await gw.ratelimits.reset('c:rl', 'u')).toBe(1);
});
