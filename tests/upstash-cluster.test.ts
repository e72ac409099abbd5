// The unmodified @upstash/redis client through /upstash on a Redis Cluster: routing by slot, SCAN over every master,
// transactions in one slot, CROSSSLOT refused clearly.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from '@upstash/redis';
import calculateSlot from 'cluster-key-slot';
import { type TestApp, testApp } from './support/app';
import { type RedisCluster, startRedisCluster } from './support/redis-cluster';

let cluster: RedisCluster;
let t: TestApp;
let server: Server;
let redis: Redis;

beforeAll(async () => {
  cluster = await startRedisCluster();
  t = await testApp('upstash-cluster', { SVC_REDIS_CLUSTER_NODES: cluster.nodes });
  server = t.data.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/upstash`;
  redis = new Redis({ url, token: 'unused', retry: false, enableAutoPipelining: false });
}, 60_000);
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await t?.close();
  await cluster?.stop();
});

const KEYS = ['a', 'b', 'c', 'd', 'e', 'f'];

test('the keys of this file land in different slots', () => {
  expect(new Set(KEYS.map((k) => calculateSlot(`${t.prefix}${k}`))).size).toBeGreaterThan(1);
});

test('commands and pipelines reach the node of each key', async () => {
  for (const k of KEYS) expect(await redis.set(k, `v-${k}`)).toBe('OK');
  expect(await redis.mget('a')).toEqual(['v-a']);
  const p = redis.pipeline();
  for (const k of KEYS) p.get(k);
  expect(await p.exec()).toEqual(KEYS.map((k) => `v-${k}`));
});

test('SCAN walks every master, and KEYS asks each', async () => {
  const found: string[] = [];
  let cursor: string | number = 0;
  for (let i = 0; i < 100; i++) {
    const [next, keys]: [string, string[]] = await redis.scan(cursor, { match: '?', count: 1000 });
    found.push(...keys);
    cursor = next;
    if (next === '0') break;
  }
  expect(found.sort()).toEqual(KEYS);
  expect((await redis.keys('?')).sort()).toEqual(KEYS);
});

test('a transaction whose keys share a hash tag runs atomically', async () => {
  const tx = redis.multi();
  tx.set('{user1}:a', '1');
  tx.incr('{user1}:a');
  tx.get('{user1}:b');
  expect(await tx.exec()).toEqual(['OK', 2, null]);
});

test('a transaction across slots is refused with CROSSSLOT, and nothing runs', async () => {
  const tx = redis.multi();
  tx.set('x-one', '1');
  tx.set('x-two', '2');
  await expect(tx.exec()).rejects.toThrow(/CROSSSLOT/);
  expect(await redis.exists('x-one')).toBe(0);
  await expect(redis.exists('x-one', 'x-two')).rejects.toThrow(/CROSSSLOT/);
});

test('a blocking pop waits on the node of its key', async () => {
  const waiting = fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/upstash`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer unused' },
    body: JSON.stringify(['BLPOP', 'cq', 5]),
  }).then((res) => res.json());
  await new Promise((resolve) => setTimeout(resolve, 200));
  await redis.rpush('cq', 'job');
  expect(await waiting).toEqual({ result: ['cq', 'job'] });
});
