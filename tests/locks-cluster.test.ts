// Locks and rate limits on a Redis Cluster: each lock's keys and each policy's counters share a slot, on every
// node; a waiting acquire is woken through the cluster's pub/sub.
import calculateSlot from 'cluster-key-slot';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { type RedisCluster, startRedisCluster } from './support/redis-cluster';
import { started, until } from './support/until';

let cluster: RedisCluster;
let t: TestApp;
beforeAll(async () => {
  cluster = await startRedisCluster();
  t = await testApp('locks-cluster', { SVC_REDIS_CLUSTER_NODES: cluster.nodes });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await cluster?.stop();
});

const post = (path: string, body: object) => request(t.data).post(path).send(body);
const NAMES = ['a', 'b', 'c', 'd', 'e', 'f'];

test('the lock names of this file land in different slots', () => {
  const slots = NAMES.map((n) => t.context.keyspace.lock(n)).map(({ key, fence }) => {
    expect(calculateSlot(fence)).toBe(calculateSlot(key));
    return calculateSlot(key);
  });
  expect(new Set(slots).size).toBeGreaterThan(1);
});

test('when locks on every node are acquired, released and waited for, then each works with growing fences', async () => {
  for (const name of NAMES) {
    const first = await post(`/store/locks/${name}/acquire`, { ttl_ms: 30_000 });
    expect(first.status).toBe(200);
    const waiting = started(post(`/store/locks/${name}/acquire`, { ttl_ms: 30_000, wait_ms: 30_000 }));
    await until(() => t.context.locks.waiters === 1);
    expect((await post(`/store/locks/${name}/release`, { token: first.body.token })).status).toBe(200);
    const second = await waiting;
    expect(second.status).toBe(200);
    expect(second.body.fence).toBeGreaterThan(first.body.fence);
    expect((await request(t.data).get(`/store/locks/${name}`)).body).toMatchObject({
      held: true,
      fence: second.body.fence,
    });
  }
});

test('when locks are held on every node, then the list walks every master and finds them all', async () => {
  const res = await request(t.data).get('/store/locks');
  expect(res.body.complete).toBe(true);
  expect(res.body.locks.map((l: { name: string }) => l.name).sort()).toEqual(NAMES);
});

test('when a policy checks several identifiers on a cluster, then they are decided together in one slot', async () => {
  for (const name of NAMES) {
    const policy = `rl:${name}`;
    expect(
      (
        await post(`/store/ratelimits/${policy}`, {
          algorithm: 'fixed_window',
          limit: 2,
          period_ms: 2_000_000_000,
        })
      ).status,
    ).toBe(201);
    const allowed = [];
    for (let i = 0; i < 3; i++)
      allowed.push(
        (await post(`/store/ratelimits/${policy}/check`, { identifiers: ['u:1', 'ip:1'] })).body.allowed,
      );
    expect(allowed).toEqual([true, true, false]);
    expect(
      (await post(`/store/ratelimits/${policy}/reset`, { identifiers: ['u:1', 'ip:1'] })).body.reset,
    ).toBe(2);
  }
});
