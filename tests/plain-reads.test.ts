// Reads without a script (src/engine/plain-reads.ts, plain-zset.ts): each answers what its typed script answers,
// ETags included, for members and values of any bytes (cjson's escapes, bytes that are not UTF-8).
import { loadConfig } from '../src/config';
import { plainRead } from '../src/engine/plain-reads';
import { CapabilityWatch } from '../src/redis/capability-watch';
import type { Reply } from '../src/redis/client';
import { createRedis, type RedisClient } from '../src/redis/client';
import { createKeyspace } from '../src/redis/keys';
import type { Store } from '../src/redis/store';
import { type RedisServer, startRedisServer } from './support/redis-server';

let server: RedisServer;
let redis: RedisClient;
let store: Store;
beforeAll(async () => {
  server = await startRedisServer();
  redis = createRedis(loadConfig({ SVC_REDIS_URL: server.url, SVC_KEY_PREFIX: 'p:' }));
  await redis.connect();
  store = { redis, keyspace: createKeyspace('p:'), deadlineMs: 5_000 };
});
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});

const ODD = ['a/b', 'q"uote', 'back\\slash', 'line\nfeed\t\r\b\f', '\u0001\u001f\u007f', 'é ✓ 😀', ''];
const BYTES = [Buffer.from([0xff, 0x00, 0x2f, 0x80]), Buffer.from([0xc3])];

/** The plain read's reply and the script's, for typedEtag with these arguments. */
async function both(key: string, ...args: (string | number)[]): Promise<[Reply | undefined, Reply]> {
  const command = { name: 'typedEtag', keys: [key], args };
  const plainReply = await plainRead(store, command);
  const script = await redis.typedEtag(`p:${key}`, ...args);
  return [plainReply, [null, script]];
}

test('when a hash or set holds odd bytes, then the plain whole read answers the script reply and ETag', async () => {
  await redis.hset('p:h', ...ODD.flatMap((v, i) => [`f${v}${i}`, v]), 'bin', BYTES[0] as Buffer);
  await redis.hset('p:h', BYTES[1] as Buffer, BYTES[0] as Buffer);
  await redis.sadd('p:s', ...ODD, ...BYTES);
  await redis.expire('p:s', 100);
  for (const [key, type, cmd] of [
    ['h', 'hash', 'HGETALL'],
    ['s', 'set', 'SMEMBERS'],
  ] as const) {
    const [plainReply, script] = await both(key, 'r2', type, 'WHOLE', cmd);
    expect(plainReply).toBeDefined();
    const [, [[items, ttl], etag]] = plainReply as [null, [[string[], number], string]];
    const [, [[scriptItems, scriptTtl], scriptEtag]] = script as [null, [[string[], number], string]];
    expect([etag, ttl, [...items].sort()]).toEqual([scriptEtag, scriptTtl, [...scriptItems].sort()]);
  }
  expect(await both('none', 'r2', 'hash', 'WHOLE', 'HGETALL')).toEqual([
    [null, [null, null]],
    [null, [null, null]],
  ]);
});

test('when a sorted set holds odd members, then a page by rank answers the script reply and ETag', async () => {
  const members = [...ODD, ...BYTES];
  await redis.zadd('p:z', ...members.flatMap((m, i) => [i * 1.5 - 3, m]));
  await redis.zadd('p:z', '1e300', 'huge', '-0.1', 'tenth');
  // A page from rank 0 that holds the whole set; pages that do not (then the whole set is read once more).
  for (const args of [
    [0, 50, 'WITHSCORES'],
    [0, 50, 'REV', 'WITHSCORES'],
    [0, 3, 'WITHSCORES'],
    [2, 50, 'REV', 'WITHSCORES'],
  ]) {
    for (const head of ['r1', 'r2']) {
      const [plainReply, script] = await both('z', head, 'zset', 'ZRANGE', ...args);
      expect(plainReply).toEqual(script);
    }
  }
  // Past the last member: an empty page of a key that exists is the script's to answer.
  expect((await both('z', 'r2', 'zset', 'ZRANGE', 40, 50, 'WITHSCORES'))[0]).toBeUndefined();
  expect(await both('none', 'r2', 'zset', 'ZRANGE', 0, 3, 'WITHSCORES')).toEqual([
    [null, [null, null]],
    [null, [null, null]],
  ]);
});

test('when a sorted set holds more than 128 members, then a page answers no ETag unasked, as the script', async () => {
  await redis.zadd('p:big', ...Array.from({ length: 200 }, (_, i) => [i, `m${i}`]).flat());
  for (const args of [
    [190, 199, 'REV', 'WITHSCORES'],
    [0, 9, 'REV', 'WITHSCORES'],
  ]) {
    const [plainReply, script] = await both('big', 'r2', 'zset', 'ZRANGE', ...args);
    expect(plainReply).toEqual(script);
  }
  expect((await both('big', 'r1', 'zset', 'ZRANGE', 0, 1, 'WITHSCORES'))[0]).toBeUndefined();
  await redis.set('p:str', 'v');
  const command = { name: 'typedEtag', keys: ['str'], args: ['r2', 'zset', 'ZRANGE', 0, 1, 'WITHSCORES'] };
  expect((await plainRead(store, command))?.[0]?.message).toBe('WRONGTYPE_OF string');
});

test('when the probe found Redis 7, then a whole hash or set is one bounded read, in the script order and limits', async () => {
  await new CapabilityWatch(redis, null, { log: () => undefined }).probe();
  for (const n of [10, 300]) {
    await redis.del('p:oh', 'p:os');
    await redis.hset(
      'p:oh',
      ...Array.from({ length: n }, (_, i) => [`f${(i * 7919) % 1000}`, `v${i}`]).flat(),
    );
    await redis.sadd('p:os', ...Array.from({ length: n }, (_, i) => `m${(i * 7919) % 1000}`));
    for (const [key, type, cmd] of [
      ['oh', 'hash', 'HGETALL'],
      ['oh', 'hash', 'HKEYS'],
      ['os', 'set', 'SMEMBERS'],
    ] as const) {
      const [plainReply, script] = await both(key, cmd === 'HKEYS' ? 'r0' : 'r2', type, 'WHOLE', cmd);
      expect(plainReply).toEqual(script);
    }
  }
  await redis.hset('p:wide', ...Array.from({ length: 1500 }, (_, i) => [`f${i}`, 'v']).flat());
  const command = { name: 'typedRead', keys: ['wide'], args: ['hash', 'WHOLE', 'HGETALL'] };
  expect((await plainRead(store, command))?.[0]?.message).toBe('PAGE_REQUIRED 1500');
  expect(await redis.info('commandstats')).toMatch(/cmdstat_hrandfield:calls=[1-9]/);
});

test("when a hash field is read with its TTL ('FIELD'), then the plain read answers the script's reply", async () => {
  await redis.hset('p:hf', 'timed', 'é', 'plain', 'v');
  await redis.expire('p:hf', 900);
  // Redis 8 / Valkey 9: the field's own TTL; elsewhere HTTL is refused, and both answer -1 (no field expires).
  await redis.call('HEXPIRE', 'p:hf', '600', 'FIELDS', '1', 'timed').catch(() => undefined);
  await redis.set('p:hf-str', 'v');
  for (const [key, field] of [
    ['hf', 'timed'],
    ['hf', 'plain'],
    ['hf', 'none'],
    ['nowhere', 'f'],
    ['hf-str', 'f'],
  ] as const) {
    const command = { name: 'typedRead', keys: [key], args: ['hash', 'FIELD', field] };
    const plainReply = await plainRead(store, command);
    const script: Reply = await redis.typedRead(`p:${key}`, 'hash', 'FIELD', field).then(
      (reply: unknown) => [null, reply],
      (err: Error) => [err, null],
    );
    // A missing field of a hash that exists is the script's to answer (undefined), as HGET's nil was.
    if (field === 'none') expect(plainReply).toBeUndefined();
    else expect([plainReply?.[0]?.message, plainReply?.[1]]).toEqual([script[0]?.message, script[1]]);
  }
  const timed = (await plainRead(store, {
    name: 'typedRead',
    keys: ['hf'],
    args: ['hash', 'FIELD', 'timed'],
  })) as Reply;
  const [value, keyTtl, fieldTtl] = timed[1] as [string, number, number];
  expect([value, keyTtl]).toEqual(['é', 900]);
  const expires = await redis.call('HTTL', 'p:hf', 'FIELDS', '1', 'timed').then(
    () => true,
    () => false,
  );
  expect(fieldTtl).toBe(expires ? 600 : -1);
});
