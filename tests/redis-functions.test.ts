// Our scripts as a Redis Functions library (src/redis/functions.ts): loaded at connect, loaded again when Redis lost
// it (FUNCTION FLUSH, a restart without persistence), EVALSHA where FUNCTION is refused; the same answers each way.
import { loadConfig } from '../src/config';
import { runOp } from '../src/engine/run';
import { strings } from '../src/families/string';
import type { RequestInput } from '../src/http/contract';
import { CapabilityWatch } from '../src/redis/capability-watch';
import { createRedis, type RedisClient } from '../src/redis/client';
import { scriptMode } from '../src/redis/functions';
import { createKeyspace } from '../src/redis/keys';
import type { Store } from '../src/redis/store';
import { type RedisServer, startRedisServer } from './support/redis-server';

let server: RedisServer;
const clients: RedisClient[] = [];
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await server.stop();
});

const bound = strings.bind({ maxValueBytes: 1 << 20 });
const build = (method: string, key: string, body: Record<string, unknown> = {}, headers = {}) => {
  const r = bound.routes.find((x) => x.method === method && x.path === '/store/string/{key}');
  const input: RequestInput = { params: { key }, headers, query: {}, body };
  return (r as NonNullable<typeof r>).build(input);
};

async function storeFor(url: string, env: Record<string, string> = {}): Promise<Store> {
  const redis = createRedis(
    loadConfig({ SVC_REDIS_URL: url, SVC_CHANGES_ENABLED: 'true', SVC_KEY_PREFIX: 'fn:', ...env }),
  );
  clients.push(redis);
  await redis.connect();
  return { redis, keyspace: createKeyspace('fn:'), deadlineMs: 5_000 };
}

const until = async (check: () => boolean | Promise<boolean>) => {
  for (let i = 0; i < 200 && !(await check()); i++) await new Promise((r) => setTimeout(r, 25));
};
const calls = async (store: Store, command: string) =>
  Number(
    new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(await store.redis.info('commandstats'))?.[1] ?? 0,
  );

test('when FUNCTION is offered, then writes go by FCALL, with the same answers and change events', async () => {
  const store = await storeFor(server.url);
  await until(() => scriptMode(store.redis) === 'functions');
  expect(scriptMode(store.redis)).toBe('functions');
  const before = await calls(store, 'fcall');
  expect((await runOp(store, build('post', 'a', { value: 'one' }))).status).toBe(201);
  expect((await runOp(store, build('post', 'a', { value: 'two' }))).status).toBe(200);
  expect(await calls(store, 'fcall')).toBe(before + 2);
  expect((await runOp(store, build('get', 'a'))).body).toEqual({ value: 'two', ttl: -1 });
  const events = (await store.redis.xrange(store.keyspace.changes, '-', '+')) as [string, string[]][];
  expect(events.map(([, fields]) => fields)).toEqual([
    ['k', 'a', 't', 'string', 'o', 'set'],
    ['k', 'a', 't', 'string', 'o', 'set'],
  ]);
});

test('when Redis loses the library (FUNCTION FLUSH, a restart without persistence), then the next write loads it again', async () => {
  const store = await storeFor(server.url);
  await until(() => scriptMode(store.redis) === 'functions');
  await store.redis.call('FUNCTION', 'FLUSH');
  expect((await runOp(store, build('post', 'b', { value: 'v' }))).status).toBe(201);
  expect(((await store.redis.call('FUNCTION', 'LIST')) as unknown[]).length).toBe(1);
  await server.stop();
  await server.start();
  await until(() => store.redis.status === 'ready');
  // No persistence: the key and the library are gone; the write that finds the library missing loads it.
  await until(async () => ((await store.redis.call('FUNCTION', 'LIST')) as unknown[]).length === 1);
  expect((await runOp(store, build('post', 'b', { value: 'w' }))).status).toBe(201);
  expect(scriptMode(store.redis)).toBe('functions');
});

test('when the server refuses FUNCTION (an ACL without it), then the scripts run by EVALSHA with the same answers', async () => {
  const admin = (await storeFor(server.url)).redis;
  await admin.call(
    'ACL',
    'SETUSER',
    'nofn',
    'on',
    '>pw',
    '~*',
    '&*',
    '+@all',
    '-function',
    '-fcall',
    '-fcall_ro',
  );
  const store = await storeFor(server.url.replace('redis://', 'redis://nofn:pw@'));
  await until(() => scriptMode(store.redis) === 'scripts');
  expect(scriptMode(store.redis)).toBe('scripts');
  expect((await runOp(store, build('post', 'c', { value: 'v' }))).status).toBe(201);
  expect((await runOp(store, build('get', 'c'))).body).toEqual({ value: 'v', ttl: -1 });
});

test('when the change feed is off, then a string SET is one plain SET ... GET with the same answers', async () => {
  const store = await storeFor(server.url, { SVC_CHANGES_ENABLED: 'false' });
  await until(() => scriptMode(store.redis) === 'functions');
  const [fcalls, sets] = [await calls(store, 'fcall'), await calls(store, 'set')];
  const created = await runOp(store, build('post', 'd', { value: 'v', ttl: 100 }));
  expect([created.status, created.etag]).toEqual([201, '"7a38d8cbd20d9932ba948efaa364bb62651d5ad4"']);
  expect((await runOp(store, build('get', 'd'))).body).toEqual({ value: 'v', ttl: 100 });
  expect((await runOp(store, build('post', 'd', { value: 'w' }))).status).toBe(200);
  expect(await store.redis.ttl('fn:d')).toBe(-1);
  await expect(
    runOp(store, build('post', 'd', { value: 'x' }, { 'if-none-match': '*' })),
  ).rejects.toMatchObject({
    type: 'key_exists',
  });
  await store.redis.hset('fn:h', 'f', 'v');
  await expect(runOp(store, build('post', 'h', { value: 'x' }))).rejects.toMatchObject({
    type: 'wrong_type',
    details: { key: 'h', type: 'hash' },
  });
  expect(await store.redis.get('fn:d')).toBe('w');
  expect([await calls(store, 'fcall'), await calls(store, 'set')]).toEqual([fcalls, sets + 4]);
});

test('when FUNCTION is refused and the probe finds Redis 7, then a string SET is still one plain SET ... GET', async () => {
  const store = await storeFor(server.url.replace('redis://', 'redis://nofn:pw@'), {
    SVC_CHANGES_ENABLED: 'false',
  });
  await until(() => scriptMode(store.redis) === 'scripts');
  const watch = new CapabilityWatch(store.redis, null, { log: () => undefined });
  expect((await watch.probe())?.functions).toBe(false);
  const [evals, sets] = [await calls(store, 'evalsha'), await calls(store, 'set')];
  expect((await runOp(store, build('post', 'e', { value: 'v' }))).status).toBe(201);
  expect((await runOp(store, build('post', 'e', { value: 'w' }))).status).toBe(200);
  expect(await store.redis.get('fn:e')).toBe('w');
  expect([await calls(store, 'evalsha'), await calls(store, 'set')]).toEqual([evals, sets + 2]);
});
