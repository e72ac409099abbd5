// Hashes and sets on a Redis Cluster: the typed scripts route by key, and set algebra spans slots and nodes.
import calculateSlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { type RedisCluster, startRedisCluster } from './support/redis-cluster';

let cluster: RedisCluster;
let t: TestApp;
let raw: Cluster;
beforeAll(async () => {
  cluster = await startRedisCluster();
  t = await testApp('cluster-data', { SVC_REDIS_CLUSTER_NODES: cluster.nodes });
  raw = new Cluster(
    cluster.nodes.split(',').map((hp) => ({ host: hp.split(':')[0], port: Number(hp.split(':')[1]) })),
  );
}, 60_000);
afterAll(async () => {
  await t?.close();
  raw?.disconnect();
  await cluster?.stop();
});

const api = () => request(t.data);
const key = (k: string) => `${t.prefix}${k}`;

test('the keys of this file land in different slots', () => {
  const slots = new Set(['a', 'b', 'c', 'a-list', 'z-a', 'z-b', 'z-c'].map((k) => calculateSlot(key(k))));
  expect(slots.size).toBeGreaterThan(1);
});

test('hash and set writes and reads work on every node', async () => {
  expect(
    (
      await api()
        .post('/store/hash/h')
        .send({ fields: { x: '1' }, ttl: 100 })
    ).status,
  ).toBe(201);
  expect((await api().get('/store/hash/h')).body.fields).toEqual({ x: '1' });
  expect(await raw.hgetall(key('h'))).toEqual({ x: '1' });
  for (const [k, members] of Object.entries({
    a: ['go', 'redis', 'rust'],
    b: ['redis', 'zig'],
    c: ['redis'],
  })) {
    expect((await api().post(`/store/set/${k}`).send({ members })).status).toBe(201);
  }
  expect((await raw.smembers(key('b'))).sort()).toEqual(['redis', 'zig']);
});

test('union, intersection and difference combine sets held by different slots', async () => {
  const run = async (name: string, keys: string[]) =>
    ((await api().post(`/store/set/${name}`).send({ keys })).body[name] as string[]).sort();
  expect(await run('union', ['a', 'b', 'c', 'missing'])).toEqual(['go', 'redis', 'rust', 'zig']);
  expect(await run('intersection', ['a', 'b', 'c'])).toEqual(['redis']);
  expect(await run('difference', ['a', 'b'])).toEqual(['go', 'rust']);
});

test('a listed key of another type on another slot is 409 wrong_type', async () => {
  await raw.rpush(key('a-list'), 'x');
  const res = await api()
    .post('/store/set/union')
    .send({ keys: ['a', 'a-list'] });
  expect(res.status).toBe(409);
  expect(res.body.message).toContain("'a-list' holds a list");
});

test('counters count on every node, and an incr batch over several slots answers atomic: false', async () => {
  const big = '9007199254740992';
  await raw.set(key('c-big'), big);
  expect(
    (await api().post('/store/string/c-big/incr').set('Content-Type', 'application/json').send({ by: 1 }))
      .body.value_string,
  ).toBe('9007199254740993');
  const res = await api()
    .post('/store/string/batch')
    .send({ operations: ['a', 'b', 'c', 'a'].map((k) => ({ type: 'incr', key: `n-${k}`, ttl: 100 })) });
  expect(res.body.atomic).toBe(false);
  expect(res.body.results.map((r: { value: number }) => r.value)).toEqual([1, 1, 1, 2]);
  expect(await raw.ttl(key('n-a'))).toBe(100);
  const field = await api()
    .post('/store/hash/h/field/n/incr')
    .set('Content-Type', 'application/json')
    .send({ by: 2.5 });
  expect([field.status, field.body.value]).toEqual([201, 2.5]);
});

test('ETags and If-Match work on every node; "atomic": "all" over several slots is 400 and applies nothing', async () => {
  await api()
    .post('/store/hash/e1')
    .send({ fields: { n: '1' } });
  const read = await api().get('/store/hash/e1');
  expect(read.headers.etag).toMatch(/^"[0-9a-f]{40}"$/);
  const stale = await api().post('/store/hash/e1/field/n').set('If-Match', '"0000"').send({ value: '2' });
  expect([stale.status, stale.headers.etag]).toEqual([412, read.headers.etag]);
  const fresh = await api()
    .post('/store/hash/e1/field/n')
    .set('If-Match', read.headers.etag as string)
    .send({ value: '2' });
  expect(fresh.status).toBe(200);
  const operations = ['a', 'b', 'c'].map((k) => ({ type: 'set', key: `e-${k}`, fields: { n: '1' } }));
  expect(new Set(operations.map((o) => calculateSlot(key(o.key)))).size).toBeGreaterThan(1);
  const all = await api().post('/store/hash/batch').send({ operations, atomic: 'all' });
  expect([all.status, all.body.error]).toEqual([400, 'invalid_request']);
  for (const o of operations) expect(await raw.exists(key(o.key))).toBe(0);
});

test('sorted sets work on every node, and a zset batch over several slots answers atomic: false', async () => {
  for (const k of ['z-a', 'z-b', 'z-c']) {
    const res = await api()
      .post(`/store/zset/${k}`)
      .send({ members: { alice: 1, bob: 2 } });
    expect(res.body).toEqual({ success: true, key: k, added: 2, updated: 0, cardinality: 2 });
    expect((await api().get(`/store/zset/${k}/member/bob`)).body).toEqual({
      member: 'bob',
      score: 2,
      rank: 1,
      rev_rank: 0,
    });
  }
  const res = await api()
    .post('/store/zset/batch')
    .send({
      operations: ['z-a', 'z-b', 'z-c'].map((k) => ({ type: 'incr', key: k, member: 'alice', by: 5 })),
    });
  expect(res.body.atomic).toBe(false);
  expect(res.body.results.map((r: { score: number }) => r.score)).toEqual([6, 6, 6]);
  expect(await raw.zscore(key('z-c'), 'alice')).toBe('6');
});

describe('lists on a Cluster', () => {
  test('when a list is pushed, paged and popped on another node, then the typed scripts route by key', async () => {
    expect(
      (
        await api()
          .post('/store/list/l1/push')
          .send({ values: ['a', 'b', 'c'] })
      ).status,
    ).toBe(201);
    expect((await api().get('/store/list/l1')).body).toMatchObject({ values: ['a', 'b', 'c'], length: 3 });
    expect(await raw.lrange(key('l1'), 0, -1)).toEqual(['a', 'b', 'c']);
    expect((await api().get('/store/keys/l1')).body.size).toBe(3);
  });

  test('when a list batch spans slots, then every item applies and atomic is false', async () => {
    const keys = ['q-a', 'q-b', 'q-c'];
    expect(new Set(keys.map((k) => calculateSlot(key(k)))).size).toBeGreaterThan(1);
    const res = await api()
      .post('/store/list/batch')
      .send({ operations: keys.map((k) => ({ type: 'push', key: k, values: ['x'] })) });
    expect(res.body.atomic).toBe(false);
    expect(res.body.results.every((r: { success: boolean }) => r.success)).toBe(true);
  });

  test('when a pop waits on an empty list, then a push on the Cluster answers it', async () => {
    const waiting = new Promise<request.Response>((resolve, reject) =>
      api()
        .post('/store/list/q-wait/pop')
        .set('Content-Type', 'application/json')
        .send({ wait: 20 })
        .then(resolve, reject),
    );
    const pool = t.context.store.waiters;
    const end = Date.now() + 20_000;
    while (pool?.waiting !== 1 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    await api()
      .post('/store/list/q-wait/push')
      .send({ values: ['job'] });
    const res = await waiting;
    expect(res.body).toEqual({ success: true, values: ['job'] });
  });
});
