// The Upstash endpoint with replicas that must confirm writes (SVC_REDIS_WAIT_REPLICAS) and behind Sentinel.
import Redis from 'ioredis';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { type SentinelSet, startSentinelSet } from './support/redis-sentinel';
import { LOOPBACK, type RedisServer } from './support/redis-server';
import { replicatedApp } from './support/replicated';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('with SVC_REDIS_WAIT_REPLICAS=1', () => {
  let primary: RedisServer;
  let replica: RedisServer;
  let t: TestApp;

  beforeAll(async () => {
    ({ primary, replica, t } = await replicatedApp('upstash-durable'));
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await Promise.all([primary?.stop(), replica?.stop()]);
  });

  test('when the replica confirms, then writes answer; when it is away, then writes are 503 and reads still answer', async () => {
    const post = (path: string, body: unknown) =>
      request(t.data)
        .post(path)
        .send(body as object);
    const primaryClient = new Redis(primary.port, LOOPBACK);
    try {
      for (const until = Date.now() + 10_000; Date.now() < until; await sleep(100)) {
        if ((await primaryClient.info('replication')).includes('state=online')) break;
      }
      expect((await post('/upstash', ['SET', 'confirmed', 'v'])).body).toEqual({ result: 'OK' });
      expect((await post('/upstash/multi-exec', [['INCR', 'tx']])).body).toEqual([{ result: 1 }]);

      await replica.stop();
      const [single, pipeline, tx, read] = await Promise.all([
        post('/upstash', ['SET', 'unconfirmed', 'v']),
        post('/upstash/pipeline', [['SET', 'p', 'v']]),
        post('/upstash/multi-exec', [['INCR', 'tx']]),
        post('/upstash', ['GET', 'confirmed']),
      ]);
      for (const res of [single, pipeline, tx]) {
        expect(res.status).toBe(503);
        expect(res.body.error).toMatch(/did not confirm/);
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      }
      expect(read.body).toEqual({ result: 'v' });
    } finally {
      primaryClient.disconnect();
    }
  }, 60_000);
});

describe('behind Sentinel', () => {
  let set: SentinelSet;
  let t: TestApp;

  beforeAll(async () => {
    set = await startSentinelSet();
    t = await testApp('upstash-sentinel', {
      SVC_REDIS_SENTINELS: set.sentinels,
      SVC_REDIS_SENTINEL_NAME: set.name,
    });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await set?.stop();
  });

  test('commands, transactions and blocking pops reach the master', async () => {
    const post = (path: string, body: unknown) =>
      request(t.data)
        .post(path)
        .send(body as object);
    expect((await post('/upstash', ['RPUSH', 'q', 'job'])).body).toEqual({ result: 1 });
    expect(
      (
        await post('/upstash/multi-exec', [
          ['SET', 'a', '1'],
          ['INCR', 'a'],
        ])
      ).body,
    ).toEqual([{ result: 'OK' }, { result: 2 }]);
    expect((await post('/upstash', ['BLPOP', 'q', '1'])).body).toEqual({ result: ['q', 'job'] });
  });
});
