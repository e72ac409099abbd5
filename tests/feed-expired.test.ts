// Keys Redis itself expires, reported from keyspace notifications (SVC_CHANGES_EXPIRED): best effort, one instance.
import Redis from 'ioredis';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { type RedisServer, startRedisServer } from './support/redis-server';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let server: RedisServer;
const apps: TestApp[] = [];

beforeAll(async () => {
  server = await startRedisServer({ args: ['--notify-keyspace-events', 'Ex'] });
  // Two instances on one Redis: one of them (the lock's holder) reports each expiry.
  const env = { SVC_REDIS_URL: server.url, SVC_CHANGES_ENABLED: 'true', SVC_CHANGES_EXPIRED: 'true' };
  const first = await testApp('feed-expired', env);
  apps.push(first, await testApp('feed-expired', { ...env, SVC_KEY_PREFIX: first.prefix }));
}, 60_000);
afterAll(async () => {
  await Promise.all(apps.map((a) => a.context.feed?.close()));
  await Promise.all(apps.map((a) => a.close()));
  await server.stop();
});

test('when a key expires, then one expired event names it (without the prefix), one instance of the two reports it', async () => {
  const [a] = apps as [TestApp];
  // Best effort: a notification sent before an instance subscribes is lost. Wait for the subscription.
  const watcher = new Redis(server.url);
  try {
    for (let i = 0; i < 200 && (await watcher.pubsub('CHANNELS', '__keyevent@0__:expired')).length === 0; i++)
      await sleep(100);
    expect(await watcher.pubsub('NUMSUB', '__keyevent@0__:expired')).toEqual(['__keyevent@0__:expired', 1]);
  } finally {
    watcher.disconnect();
  }
  const { next } = (await request(a.data).get('/store/changes')).body;
  await request(a.data).post('/store/string/short-lived').send({ value: 'v', ttl: 1 }).expect(201);
  const seen: { key: string; op: string; type: string }[] = [];
  // Redis's background sweep expires the key within a second or so; its notification follows.
  for (let i = 0; i < 60 && !seen.some((e) => e.op === 'expired'); i++) {
    await sleep(500);
    seen.splice(
      0,
      seen.length,
      ...(await request(a.data).get('/store/changes').query({ since: next })).body.events,
    );
  }
  expect(seen.map((e) => [e.key, e.type, e.op])).toEqual([
    ['short-lived', 'string', 'set'],
    ['short-lived', '', 'expired'],
  ]);
}, 60_000);
