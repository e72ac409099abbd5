// Key discovery on a Redis Cluster of three masters: the cursor walks every master in turn.
import type { Cluster } from 'ioredis';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { type RedisCluster, startRedisCluster } from './support/redis-cluster';

let cluster: RedisCluster;
let t: TestApp;

beforeAll(async () => {
  cluster = await startRedisCluster();
  t = await testApp('keys-cluster', { SVC_REDIS_CLUSTER_NODES: cluster.nodes });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await cluster?.stop();
});

test('when keys live on every master, then a walk page by page returns all of them', async () => {
  const direct = t.redis as unknown as Cluster;
  const names = Array.from({ length: 600 }, (_, i) => `c:${i}`);
  // Auto-pipelined: one round trip per master.
  await Promise.all(names.map((name) => direct.set(`${t.prefix}${name}`, 'v')));
  const masters = direct.nodes('master');
  const perMaster = await Promise.all(masters.map((node) => node.dbsize()));
  expect(perMaster.every((n) => n > 0)).toBe(true);

  const seen = new Set<string>();
  let cursor = '';
  let pages = 0;
  for (;;) {
    const res = await request(t.data)
      .get('/store/keys')
      .query({ prefix: 'c:', limit: 100, ...(cursor ? { cursor } : {}) });
    expect(res.status).toBe(200);
    for (const entry of res.body.keys) seen.add(entry.key);
    pages++;
    if (res.body.complete) break;
    cursor = res.body.cursor;
  }
  expect([...seen].sort()).toEqual([...names].sort());
  expect(pages).toBeGreaterThanOrEqual(6);
}, 30_000);

test('when one key is asked about and deleted, then it is found on its master and removed', async () => {
  const direct = t.redis as unknown as Cluster;
  await direct.hset(`${t.prefix}c:hash`, 'a', '1', 'b', '2');
  expect((await request(t.data).get('/store/keys/c:hash')).body).toEqual({
    key: 'c:hash',
    type: 'hash',
    ttl: -1,
    size: 2,
  });
  expect((await request(t.data).delete('/store/keys/c:hash')).body).toEqual({ success: true, deleted: true });
  expect(await direct.exists(`${t.prefix}c:hash`)).toBe(0);
});
