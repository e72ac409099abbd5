// ETags digest the content only (issue 28): stable across reads (rehashing), DEBUG RELOAD and both encodings.
import Redis from 'ioredis';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { type RedisServer, startRedisServer } from './support/redis-server';

let server: RedisServer;
let t: TestApp;
let redis: Redis;
beforeAll(async () => {
  // A server of our own: DEBUG RELOAD reloads the whole dataset, which other test files should not see.
  server = await startRedisServer({ args: ['--enable-debug-command', 'yes'] });
  t = await testApp('etags-content', { SVC_REDIS_URL: server.url });
  redis = new Redis(server.url);
}, 30_000);
afterAll(async () => {
  redis.disconnect();
  await t.close();
  await server.stop();
});

const api = () => request(t.data);
const raw = (key: string) => `${t.prefix}${key}`;
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const LONG = 'v'.repeat(100); // over 64 bytes: no compact encoding, whatever the size

/** Keys of each family in their compact encoding (small) and their big one (many elements, or a long value). */
const KEYS: [
  family: string,
  key: string,
  seed: (k: string) => Promise<unknown>,
  read: (i: number) => string,
][] = [
  [
    'hash',
    'small-h',
    (k) => redis.hset(k, ...range(20).flatMap((i) => [`f${i}`, `v${i}`])),
    (i) => `field/f${i}`,
  ],
  [
    'hash',
    'big-h',
    (k) => redis.hset(k, ...range(300).flatMap((i) => [`f${i}`, `v${i}`])),
    (i) => `field/f${i}`,
  ],
  ['hash', 'long-h', (k) => redis.hset(k, 'a', LONG, 'b', 'x'), () => 'field/a'],
  ['set', 'small-s', (k) => redis.sadd(k, ...range(20).map((i) => `m${i}`)), (i) => `member/m${i}/exists`],
  ['set', 'int-s', (k) => redis.sadd(k, ...range(20)), (i) => `member/${i}/exists`],
  ['set', 'big-s', (k) => redis.sadd(k, ...range(300).map((i) => `m${i}`)), (i) => `member/m${i}/exists`],
  ['zset', 'small-z', (k) => redis.zadd(k, ...range(20).flatMap((i) => [i, `m${i}`])), (i) => `member/m${i}`],
  [
    'zset',
    'big-z',
    (k) => redis.zadd(k, ...range(300).flatMap((i) => [i / 3, `m${i}`])),
    (i) => `member/m${i}`,
  ],
  ['list', 'small-l', (k) => redis.rpush(k, ...range(20).map((i) => `e${i}`)), (i) => `index/${i}`],
  ['list', 'big-l', (k) => redis.rpush(k, ...range(300).map(() => LONG)), (i) => `index/${i}`],
];

/** The key's ETag as a client asks for it (a big list or sorted set answers it when asked): a conditional HEAD. */
const etagOf = async (family: string, key: string) => {
  const res = await api().head(`/store/${family}/${key}`).set('If-None-Match', '"other"');
  expect(res.status).toBe(200);
  return res.headers.etag as string;
};

describe.each(KEYS)('a %s key (%s)', (family, key, seed, read) => {
  test('when it is read 20 times, reloaded (DEBUG RELOAD) and read again, then its ETag stays the same', async () => {
    await seed(raw(key));
    const before = await etagOf(family, key);
    for (const i of range(20))
      expect((await api().get(`/store/${family}/${key}/${read(i)}`)).status).toBe(200);
    expect(await etagOf(family, key)).toBe(before);
    await redis.call('DEBUG', 'RELOAD');
    expect(await etagOf(family, key)).toBe(before);
    for (const i of range(20))
      expect((await api().get(`/store/${family}/${key}/${read(i)}`)).status).toBe(200);
    const conditional = await api().get(`/store/${family}/${key}`).set('If-None-Match', before);
    expect(conditional.status).toBe(304);
  });
});

test('when two hashes hold the same pairs written in other orders and encodings, then they have the same ETag', async () => {
  const pairs = range(200).flatMap((i) => [`f${i}`, `v${i}`]);
  await redis.hset(raw('order-a'), ...pairs);
  // Written the other way round, and through the compact encoding first (converted when it grows).
  for (const i of range(200).reverse()) await redis.hset(raw('order-b'), `f${i}`, `v${i}`);
  expect(await etagOf('hash', 'order-b')).toBe(await etagOf('hash', 'order-a'));
  // Pairs are digested as pairs: the same strings paired otherwise are another content.
  await redis.hset(raw('swap-a'), 'a', 'b', 'c', 'd');
  await redis.hset(raw('swap-b'), 'a', 'd', 'c', 'b');
  expect(await etagOf('hash', 'swap-a')).not.toBe(await etagOf('hash', 'swap-b'));
});
