// Set algebra (union, intersection, difference) and the reserved segments of the set family.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('set-algebra');
  await t.raw.sadd(raw('a'), 'go', 'redis', 'rust');
  await t.raw.sadd(raw('b'), 'redis', 'rust', 'zig');
  await t.raw.sadd(raw('c'), 'redis');
});
afterAll(() => t.close());

const api = () => request(t.data);
const raw = (key: string) => `${t.prefix}${key}`;
const run = async (name: string, keys: unknown) => {
  const res = await api().post(`/store/set/${name}`).send({ keys });
  return { status: res.status, body: res.body, members: (res.body[name] ?? []).sort() as string[] };
};

describe('union, intersection and difference', () => {
  test('union answers the members of any set, each once', async () => {
    const res = await run('union', ['a', 'b', 'c']);
    expect(res.status).toBe(200);
    expect(res.members).toEqual(['go', 'redis', 'rust', 'zig']);
    expect(res.body.cardinality).toBe(4);
  });

  test('intersection answers the members of every set', async () => {
    expect((await run('intersection', ['a', 'b'])).members).toEqual(['redis', 'rust']);
    expect((await run('intersection', ['a', 'b', 'c'])).body).toEqual({
      intersection: ['redis'],
      cardinality: 1,
    });
  });

  test('difference answers the members of the first set that are in none of the others', async () => {
    expect((await run('difference', ['a', 'b'])).body).toEqual({ difference: ['go'], cardinality: 1 });
    expect((await run('difference', ['b', 'a', 'c'])).members).toEqual(['zig']);
  });

  test('one key answers that set', async () => {
    for (const name of ['union', 'intersection', 'difference']) {
      expect((await run(name, ['a'])).members).toEqual(['go', 'redis', 'rust']);
    }
  });

  test('a missing key counts as the empty set', async () => {
    expect((await run('union', ['a', 'missing'])).members).toEqual(['go', 'redis', 'rust']);
    expect((await run('intersection', ['a', 'missing'])).body).toEqual({ intersection: [], cardinality: 0 });
    expect((await run('difference', ['missing', 'a'])).body).toEqual({ difference: [], cardinality: 0 });
    expect((await run('difference', ['a', 'missing'])).members).toEqual(['go', 'redis', 'rust']);
    expect((await run('union', ['missing', 'missing-too'])).body).toEqual({ union: [], cardinality: 0 });
  });

  test('a key listed twice changes nothing', async () => {
    expect((await run('intersection', ['a', 'a'])).members).toEqual(['go', 'redis', 'rust']);
    expect((await run('difference', ['a', 'a'])).members).toEqual([]);
  });

  test('a key of another type is 409 wrong_type naming it, whatever the operation', async () => {
    await t.raw.rpush(raw('a-list'), 'x');
    for (const name of ['union', 'intersection', 'difference']) {
      const res = await run(name, ['a', 'missing', 'a-list']);
      expect(res.status).toBe(409);
      expect(res.body.error).toBe('wrong_type');
      expect(res.body.message).toMatch(/a-list.*list/);
    }
  });

  test.each([
    ['keys missing', 'invalid_request', {}],
    ['keys empty', 'invalid_request', { keys: [] }],
    ['keys not an array', 'invalid_request', { keys: 'a' }],
    ['101 keys', 'invalid_request', { keys: Array.from({ length: 101 }, (_, i) => `k${i}`) }],
    ['an invalid key', 'invalid_key', { keys: ['a', 'no spaces'] }],
    ['an unknown property', 'invalid_request', { keys: ['a'], store: 'x' }],
  ])('a body with %s is 400 %s', async (_what, error, body) => {
    const res = await api().post('/store/set/union').send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(error);
  });

  test('100 keys are accepted', async () => {
    const keys = Array.from({ length: 100 }, (_, i) => (i === 0 ? 'a' : `none${i}`));
    expect((await run('union', keys)).members).toEqual(['go', 'redis', 'rust']);
  });
});

describe('reserved segments', () => {
  test('a set named union can be read, checked, changed member by member and deleted', async () => {
    await t.raw.sadd(raw('union'), 'x');
    expect((await api().get('/store/set/union')).body.members).toEqual(['x']);
    expect((await api().get('/store/set/union/cardinality')).body).toEqual({ cardinality: 1 });
    expect(
      (await api().post('/store/set/union/member/y').set('Content-Type', 'application/json')).status,
    ).toBe(201);
    expect((await api().get('/store/set/union/member/y/exists')).body).toEqual({ exists: true });
    expect((await api().delete('/store/set/union')).body.deleted).toBe(true);
  });

  test('POST on a reserved segment is the operation, not a write to that key', async () => {
    const res = await api()
      .post('/store/set/intersection')
      .send({ members: ['x'] });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('keys');
    expect(await t.raw.exists(raw('intersection'))).toBe(0);
  });

  test('another method on a reserved segment is 405, each allowed method listed once', async () => {
    const res = await api().put('/store/set/union');
    expect(res.status).toBe(405);
    expect(String(res.headers.allow).split(', ').sort()).toEqual(['DELETE', 'GET', 'HEAD', 'POST']);
  });
});
