// Idempotency-Key where writes are harder: replicas that must confirm them, and a Redis Cluster with the change feed.
import { randomUUID } from 'node:crypto';
import calculateSlot from 'cluster-key-slot';
import Redis, { Cluster } from 'ioredis';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { type RedisCluster, startRedisCluster } from './support/redis-cluster';
import { LOOPBACK, type RedisServer } from './support/redis-server';
import { replicatedApp } from './support/replicated';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('with SVC_REDIS_WAIT_REPLICAS=1', () => {
  let primary: RedisServer;
  let replica: RedisServer;
  let t: TestApp;
  let direct: Redis;

  beforeAll(async () => {
    ({ primary, replica, t } = await replicatedApp('idem-durable'));
    direct = new Redis(primary.port, LOOPBACK);
    for (const until = Date.now() + 10_000; Date.now() < until; await sleep(100)) {
      if ((await direct.info('replication')).includes('state=online')) break;
    }
  }, 60_000);

  afterAll(async () => {
    direct?.disconnect();
    await t?.close();
    await Promise.all([primary?.stop(), replica?.stop()]);
  });

  test('when an increment is unconfirmed (503) and retried, then it is applied once: replayed once confirmed', async () => {
    const key = randomUUID();
    const incr = () =>
      request(t.data).post('/store/string/d-c/incr').set('Idempotency-Key', key).send({ by: 1 });
    expect((await incr()).status).toBe(201);
    // The replica is away: the next write reaches the primary but is not confirmed.
    const other = randomUUID();
    await replica.stop();
    try {
      const unconfirmed = await request(t.data)
        .post('/store/string/d-c/incr')
        .set('Idempotency-Key', other)
        .send({ by: 1 });
      expect(unconfirmed.status).toBe(503);
      const again = await request(t.data)
        .post('/store/string/d-c/incr')
        .set('Idempotency-Key', other)
        .send({ by: 1 });
      expect(again.status).toBe(503);
    } finally {
      await replica.start();
    }
    let retried: request.Response | undefined;
    for (const until = Date.now() + 20_000; Date.now() < until; await sleep(200)) {
      retried = await request(t.data)
        .post('/store/string/d-c/incr')
        .set('Idempotency-Key', other)
        .send({ by: 1 });
      if (retried.status !== 503) break;
    }
    expect(retried?.status).toBe(200);
    expect(retried?.headers['idempotent-replayed']).toBe('true');
    expect(retried?.body.value).toBe(2);
    expect(await direct.get(`${t.prefix}d-c`)).toBe('2');
    expect((await incr()).headers['idempotent-replayed']).toBe('true');
    expect(await direct.get(`${t.prefix}d-c`)).toBe('2');
  }, 60_000);
});

describe('on a Redis Cluster with the change feed', () => {
  let cluster: RedisCluster;
  let t: TestApp;
  let raw: Cluster;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    t = await testApp('idem-cluster', {
      SVC_REDIS_CLUSTER_NODES: cluster.nodes,
      SVC_CHANGES_ENABLED: 'true',
    });
    raw = new Cluster(
      cluster.nodes.split(',').map((hp) => ({ host: hp.split(':')[0], port: Number(hp.split(':')[1]) })),
    );
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    raw?.disconnect();
    await cluster?.stop();
  });

  /** Events on every master's stream. */
  const events = async () => {
    let total = 0;
    for (const node of raw.nodes('master')) {
      for (const stream of await node.keys('#svc:changes:*')) total += await node.xlen(stream);
    }
    return total;
  };

  test('when a batch over several slots is retried, then each slot keeps its record beside its keys and nothing applies twice', async () => {
    const keys = ['ca', 'cb', 'cc', 'cd'];
    expect(new Set(keys.map((k) => calculateSlot(`${t.prefix}${k}`))).size).toBeGreaterThan(1);
    const key = randomUUID();
    const body = { operations: keys.map((k) => ({ type: 'incr', key: k, by: 2 })) };
    const first = await request(t.data).post('/store/string/batch').set('Idempotency-Key', key).send(body);
    expect(first.status).toBe(200);
    expect(first.body.atomic).toBe(false);
    const before = await events();
    const retry = await request(t.data).post('/store/string/batch').set('Idempotency-Key', key).send(body);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    for (const k of keys) expect(await raw.get(`${t.prefix}${k}`)).toBe('2');
    expect(await events()).toBe(before);
    // One record per slot, each in the slot of the keys it covers.
    const records: string[] = [];
    for (const node of raw.nodes('master')) records.push(...(await node.keys('#svc:idem:*')));
    const slots = new Set(keys.map((k) => calculateSlot(`${t.prefix}${k}`)));
    expect(new Set(records.map((r) => calculateSlot(r)))).toEqual(slots);
  });

  test('when a base64 write is retried on a Cluster, then the bytes are stored once and the replay answers', async () => {
    const key = randomUUID();
    const bytes = Buffer.from([0, 255, 128, 10]);
    const push = () =>
      request(t.data)
        .post('/store/list/cl/push')
        .set('Idempotency-Key', key)
        .send({ values: [bytes.toString('base64')], encoding: 'base64' });
    const first = await push();
    expect(first.status).toBe(201);
    expect((await push()).headers['idempotent-replayed']).toBe('true');
    const stored = await raw.lrangeBuffer(`${t.prefix}cl`, 0, -1);
    expect(stored).toHaveLength(1);
    expect(stored[0]?.equals(bytes)).toBe(true);
  });
});
