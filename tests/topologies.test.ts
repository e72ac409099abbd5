// Redis Cluster and Sentinel: the same API over other topologies, each started here from redis-server.
import { execFileSync } from 'node:child_process';
import type { Cluster } from 'ioredis';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { type RedisCluster, startRedisCluster } from './support/redis-cluster';
import { type RedisServer, startRedisServer } from './support/redis-server';

describe('on a Redis Cluster of three masters', () => {
  let cluster: RedisCluster;
  let t: TestApp;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    t = await testApp('cluster', { SVC_REDIS_CLUSTER_NODES: cluster.nodes });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await cluster?.stop();
  });

  test('strings are written and read across slots', async () => {
    for (const key of ['alpha', 'beta', 'gamma', 'delta']) {
      await request(t.data).post(`/store/string/${key}`).send({ value: key }).expect(201);
      expect((await request(t.data).get(`/store/string/${key}`)).body.value).toBe(key);
    }
    const direct = t.redis as unknown as Cluster;
    expect(await direct.get(`${t.prefix}gamma`)).toBe('gamma');
  });

  test('a batch over several slots runs per slot and says atomic: false', async () => {
    const res = await request(t.data)
      .post('/store/string/batch')
      .send({ operations: ['k1', 'k2', 'k3', 'k4', 'k5'].map((key) => ({ type: 'set', key, value: key })) });
    expect(res.status).toBe(200);
    expect(res.body.atomic).toBe(false);
    expect(res.body.results.every((r: { success: boolean }) => r.success)).toBe(true);
  });

  test('a batch whose keys share a hash tag is atomic', async () => {
    // The prefix is part of the Redis key, so the hash tag must be the first {...} in it: use a tagged prefix.
    const tagged = await testApp('cluster-tag', {
      SVC_REDIS_CLUSTER_NODES: cluster.nodes,
      SVC_KEY_PREFIX: `{tenant-${Date.now()}}:`,
    });
    try {
      const res = await request(tagged.data)
        .post('/store/string/batch')
        .send({ operations: ['a', 'b', 'c'].map((key) => ({ type: 'set', key, value: key })) });
      expect(res.body.atomic).toBe(true);
    } finally {
      await tagged.close();
    }
  });
});

describe('behind Redis Sentinel', () => {
  let master: RedisServer;
  let sentinel: RedisServer;
  let t: TestApp;

  beforeAll(async () => {
    master = await startRedisServer();
    sentinel = await startRedisServer({
      args: ['--sentinel'],
      config: `sentinel monitor gw 127.0.0.1 ${master.port} 1\nsentinel down-after-milliseconds gw 5000\n`,
    });
    t = await testApp('sentinel', {
      SVC_REDIS_SENTINELS: `127.0.0.1:${sentinel.port}`,
      SVC_REDIS_SENTINEL_NAME: 'gw',
    });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await sentinel.stop();
    await master.stop();
  });

  test('the service finds the master through Sentinel and serves from it', async () => {
    await request(t.data).post('/store/string/via-sentinel').send({ value: 'yes' }).expect(201);
    expect((await request(t.data).get('/store/string/via-sentinel')).body.value).toBe('yes');
    const onMaster = execFileSync('redis-cli', ['-p', String(master.port), 'get', `${t.prefix}via-sentinel`]);
    expect(onMaster.toString().trim()).toBe('yes');
  });

  test('keys are listed from the master', async () => {
    await request(t.data)
      .post('/store/hash/listed-via-sentinel')
      .send({ fields: { f: 'v' } })
      .expect(201);
    const res = await request(t.data).get('/store/keys').query({ prefix: 'listed-via-', limit: 1000 });
    expect(res.status).toBe(200);
    expect(res.body.keys).toEqual([{ key: 'listed-via-sentinel', type: 'hash', ttl: -1 }]);
  });
});
