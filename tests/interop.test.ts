// Interop with plain Redis clients: the API and redis-cli see the same hashes, sets and TTLs, and a key of
// another type (whoever wrote it) is 409 wrong_type on every hash and set endpoint, with nothing changed.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
const api = () => request(t.data);
const raw = (key: string) => `${t.prefix}${key}`;

/** Keys of every Redis type, written by a plain client, each with an expiry that must survive. */
const FOREIGN = {
  string: (k: string) => t.raw.set(k, 'text'),
  list: (k: string) => t.raw.rpush(k, 'a', 'b'),
  zset: (k: string) => t.raw.zadd(k, 1, 'a'),
  stream: (k: string) => t.raw.xadd(k, '1-1', 'f', 'v'),
  hash: (k: string) => t.raw.hset(k, 'f', 'v'),
  set: (k: string) => t.raw.sadd(k, 'm'),
};
type RedisType = keyof typeof FOREIGN;
const dumps = new Map<string, Buffer | null>();

beforeAll(async () => {
  t = await testApp('interop');
  for (const [type, write] of Object.entries(FOREIGN)) {
    await write(raw(`of-${type}`));
    await t.raw.expire(raw(`of-${type}`), 1000);
    dumps.set(type, await t.raw.dumpBuffer(raw(`of-${type}`)));
  }
});
afterAll(() => t.close());

describe('what the API writes, a plain Redis client sees', () => {
  test('a hash: HGETALL holds the fields, TTL the expiry', async () => {
    await api()
      .post('/store/hash/w-hash')
      .send({ fields: { a: '1', b: '' }, ttl: 300 });
    await api().post('/store/hash/w-hash/field/c').send({ value: '3' });
    expect(await t.raw.type(raw('w-hash'))).toBe('hash');
    expect(await t.raw.hgetall(raw('w-hash'))).toEqual({ a: '1', b: '', c: '3' });
    expect(await t.raw.ttl(raw('w-hash'))).toBeGreaterThan(250);
    await api().delete('/store/hash/w-hash/ttl');
    expect(await t.raw.ttl(raw('w-hash'))).toBe(-1);
  });

  test('a set: SMEMBERS holds the members, TTL the expiry', async () => {
    await api()
      .post('/store/set/w-set')
      .send({ members: ['a', 'b'], ttl: 300 });
    await api().post('/store/set/w-set/member/c').set('Content-Type', 'application/json');
    expect(await t.raw.type(raw('w-set'))).toBe('set');
    expect((await t.raw.smembers(raw('w-set'))).sort()).toEqual(['a', 'b', 'c']);
    expect(await t.raw.ttl(raw('w-set'))).toBeGreaterThan(250);
    await api().post('/store/set/w-set/expire').send({ ttl: 20 });
    expect(await t.raw.ttl(raw('w-set'))).toBeLessThanOrEqual(20);
  });
});

describe('what a plain Redis client writes, the API reads', () => {
  test('a hash written with HSET and EXPIRE', async () => {
    await t.raw.hset(raw('r-hash'), 'name', 'Ada', 'born', '1815');
    await t.raw.expire(raw('r-hash'), 400);
    const res = await api().get('/store/hash/r-hash');
    expect(res.body.fields).toEqual({ name: 'Ada', born: '1815' });
    expect(res.body.ttl).toBeGreaterThan(300);
    expect((await api().get('/store/hash/r-hash/field/born')).body.value).toBe('1815');
    await t.raw.hdel(raw('r-hash'), 'born');
    expect((await api().get('/store/hash/r-hash/field/born')).status).toBe(404);
  });

  test('a set written with SADD and EXPIRE', async () => {
    await t.raw.sadd(raw('r-set'), 'x', 'y');
    await t.raw.expire(raw('r-set'), 400);
    const res = await api().get('/store/set/r-set');
    expect(res.body.members.sort()).toEqual(['x', 'y']);
    expect(res.body.ttl).toBeGreaterThan(300);
    expect((await api().get('/store/set/r-set/ttl')).body.ttl).toBeGreaterThan(300);
    await t.raw.del(raw('r-set'));
    expect((await api().get('/store/set/r-set')).status).toBe(404);
  });
});

type Call = [label: string, method: 'get' | 'post' | 'delete', path: string, body?: object, header?: string];
const HASH_CALLS: Call[] = [
  ['read', 'get', ''],
  ['merge', 'post', '', { fields: { a: '1' } }],
  ['replace', 'post', '', { fields: { a: '1' }, mode: 'replace', ttl: 5 }],
  ['delete', 'delete', ''],
  ['read field', 'get', '/field/f'],
  ['write field', 'post', '/field/f', { value: 'v' }],
  ['create field', 'post', '/field/new', { value: 'v' }, 'If-None-Match'],
  ['delete field', 'delete', '/field/f'],
  ['exists', 'get', '/exists'],
  ['keys', 'get', '/keys'],
  ['values', 'get', '/values'],
  ['ttl', 'get', '/ttl'],
  ['persist', 'delete', '/ttl'],
  ['expire', 'post', '/expire', { ttl: 5 }],
];
const SET_CALLS: Call[] = [
  ['read', 'get', ''],
  ['merge', 'post', '', { members: ['a'] }],
  ['replace', 'post', '', { members: ['a'], mode: 'replace' }],
  ['delete', 'delete', ''],
  ['add member', 'post', '/member/m'],
  ['remove member', 'delete', '/member/m', undefined, 'If-Match'],
  ['member exists', 'get', '/member/m/exists'],
  ['cardinality', 'get', '/cardinality'],
  ['pop', 'post', '/pop'],
  ['ttl', 'get', '/ttl'],
  ['persist', 'delete', '/ttl'],
  ['expire', 'post', '/expire', { ttl: 5 }],
];

const cases = (family: 'hash' | 'set', calls: Call[]) =>
  (Object.keys(FOREIGN) as RedisType[])
    .filter((type) => type !== family)
    .flatMap((type) => calls.map((call) => ({ family, type, label: call[0], call })));

describe('a key of another type is 409 wrong_type, and nothing changes', () => {
  test.each([...cases('hash', HASH_CALLS), ...cases('set', SET_CALLS)])(
    '$family endpoint on a $type key: $label',
    async ({ family, type, call: [, method, path, body, header] }) => {
      const key = `of-${type}`;
      let req = api()[method](`/store/${family}/${key}${path}`);
      if (header) req = req.set(header, '*');
      if (method === 'post') req = req.set('Content-Type', 'application/json');
      const res = body ? await req.send(body) : await req;
      expect(res.status).toBe(409);
      expect(res.body.error).toBe('wrong_type');
      expect(res.body.message).toContain(`'${key}' holds a ${type}`);
      expect(await t.raw.dumpBuffer(raw(key))).toEqual(dumps.get(type));
      expect(await t.raw.ttl(raw(key))).toBeGreaterThan(900);
    },
  );

  test.each(['union', 'intersection', 'difference'])('set %s listing a key of another type', async (name) => {
    for (const type of ['string', 'list', 'zset', 'stream', 'hash']) {
      const res = await api()
        .post(`/store/set/${name}`)
        .send({ keys: ['of-set', `of-${type}`] });
      expect(res.status).toBe(409);
      expect(res.body.message).toContain(`'of-${type}' holds a ${type}`);
    }
  });
});
