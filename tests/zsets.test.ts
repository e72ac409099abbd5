// Sorted sets end to end: whole writes (merge, replace, only new / existing, limits), reads by rank and by score.
import { expectSchema } from './support/schemas';
import { zsetTestApp } from './support/zsets';

const { api, raw, redis, all, seed } = zsetTestApp('zsets');

describe('writing a sorted set', () => {
  test('when the key is new, then 201 with added, updated and cardinality, and no expiry', async () => {
    const res = await api()
      .post('/store/zset/w-new')
      .send({ members: { alice: 4200, bob: 3100.5, floor: '-inf', top: '+inf' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ success: true, key: 'w-new', added: 4, updated: 0, cardinality: 4 });
    expectSchema('ZsetWriteResponse', res.body);
    expect(await all('w-new')).toEqual(['floor', '-inf', 'bob', '3100.5', 'alice', '4200', 'top', 'inf']);
    expect(await redis().ttl(raw('w-new'))).toBe(-1);
  });

  test('when the key exists, then 200, scores merge, and added / updated count new and changed members', async () => {
    await redis().zadd(raw('w-merge'), 1, 'a', 2, 'b', 3, 'c');
    await redis().expire(raw('w-merge'), 500);
    const res = await api()
      .post('/store/zset/w-merge')
      .send({ members: { a: 1, b: 20, d: 4 } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, key: 'w-merge', added: 1, updated: 1, cardinality: 4 });
    expect(await all('w-merge')).toEqual(['a', '1', 'c', '3', 'd', '4', 'b', '20']);
    expect(await redis().ttl(raw('w-merge'))).toBeGreaterThan(400);
  });

  test('when mode is replace, then the old members and the expiry are gone; ttl sets a new one', async () => {
    await redis().zadd(raw('w-replace'), 1, 'old', 2, 'keep');
    await redis().expire(raw('w-replace'), 500);
    const res = await api()
      .post('/store/zset/w-replace')
      .send({ members: { keep: 5, new: 6 }, mode: 'replace' });
    expect(res.body).toEqual({ success: true, key: 'w-replace', added: 2, updated: 0, cardinality: 2 });
    expect(await all('w-replace')).toEqual(['keep', '5', 'new', '6']);
    expect(await redis().ttl(raw('w-replace'))).toBe(-1);
    await api()
      .post('/store/zset/w-replace')
      .send({ members: { x: 1 }, ttl: 50 });
    expect(await redis().ttl(raw('w-replace'))).toBeLessThanOrEqual(50);
  });

  test('when only is new, then existing scores stay; when only is existing, then no member is added', async () => {
    await redis().zadd(raw('w-only'), 1, 'a');
    const nx = await api()
      .post('/store/zset/w-only')
      .send({ members: { a: 100, b: 2 }, only: 'new' });
    expect(nx.body).toEqual({ success: true, key: 'w-only', added: 1, updated: 0, cardinality: 2 });
    const xx = await api()
      .post('/store/zset/w-only')
      .send({ members: { a: 100, c: 3 }, only: 'existing' });
    expect(xx.body).toEqual({ success: true, key: 'w-only', added: 0, updated: 1, cardinality: 2 });
    expect(await all('w-only')).toEqual(['b', '2', 'a', '100']);
    const missing = await api()
      .post('/store/zset/w-only-missing')
      .send({ members: { a: 1 }, only: 'existing' });
    expect([missing.status, missing.body.cardinality]).toEqual([200, 0]);
    expect(await redis().exists(raw('w-only-missing'))).toBe(0);
  });

  test('when If-None-Match: * meets an existing key, then 409 key_exists and nothing changes', async () => {
    const first = await api()
      .post('/store/zset/w-create')
      .set('If-None-Match', '*')
      .send({ members: { a: 1 } });
    expect(first.status).toBe(201);
    const again = await api()
      .post('/store/zset/w-create')
      .set('If-None-Match', '*')
      .send({ members: { a: 9, b: 2 } });
    expect([again.status, again.body.error]).toEqual([409, 'key_exists']);
    expect(await all('w-create')).toEqual(['a', '1']);
  });

  test('when more than 1000 members are written, then all arrive (the script sends them in chunks)', async () => {
    const members = Object.fromEntries(Array.from({ length: 2500 }, (_, i) => [`m${i}`, i]));
    await redis().zadd(raw('w-many'), 5, 'm5');
    const res = await api().post('/store/zset/w-many').send({ members, only: 'new' });
    expect(res.body).toEqual({ success: true, key: 'w-many', added: 2499, updated: 0, cardinality: 2500 });
    expect(await redis().zscore(raw('w-many'), 'm5')).toBe('5');
    expect(await redis().zscore(raw('w-many'), 'm2499')).toBe('2499');
  });

  test.each([
    ['a score that is a string', { members: { a: '10' } }, 'invalid_value'],
    ['a score that is null', { members: { a: null } }, 'invalid_value'],
    ['"nan" as a score', { members: { a: 'nan' } }, 'invalid_value'],
    ['an empty members object', { members: {} }, 'invalid_value'],
    ['members as an array', { members: ['a'] }, 'invalid_value'],
    ['an empty member name', { members: { '': 1 } }, 'invalid_member'],
    ['an unknown only', { members: { a: 1 }, only: 'some' }, 'invalid_request'],
    [
      'only existing with replace',
      { members: { a: 1 }, only: 'existing', mode: 'replace' },
      'invalid_request',
    ],
    ['a ttl of 0', { members: { a: 1 }, ttl: 0 }, 'invalid_ttl'],
  ])('when the body has %s, then 400 and nothing changes', async (_, body, error) => {
    await redis().zadd(raw('w-bad'), 1, 'x');
    const res = await api().post('/store/zset/w-bad').send(body);
    expect([res.status, res.body.error]).toEqual([400, error]);
    expect(await all('w-bad')).toEqual(['x', '1']);
  });

  test('when there are more than 10,000 members or a member is too long, then 400', async () => {
    const many = Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`m${i}`, i]));
    const tooMany = await api().post('/store/zset/w-limit').send({ members: many });
    expect([tooMany.status, tooMany.body.error]).toEqual([400, 'invalid_value']);
    const long = await api()
      .post('/store/zset/w-limit')
      .send({ members: { ['x'.repeat(65_537)]: 1 } });
    expect([long.status, long.body.error]).toEqual([400, 'invalid_member']);
    expect(await redis().exists(raw('w-limit'))).toBe(0);
  });
});

describe('reading by rank', () => {
  test('when no page is asked, then every member comes lowest first with scores, and more is false', async () => {
    await seed('r-rank');
    const res = await api().get('/store/zset/r-rank');
    expect(res.status).toBe(200);
    expectSchema('ZsetPageResponse', res.body);
    expect(res.body.members).toHaveLength(10);
    expect(res.body.members[0]).toEqual({ member: 'p0', score: 0 });
    expect([res.body.offset, res.body.more, res.body.ttl]).toEqual([0, false, -1]);
  });

  test('when rev, offset and limit are given, then that page of the top comes, and more tells what follows', async () => {
    await seed('r-top');
    const top3 = await api().get('/store/zset/r-top?rev=true&limit=3');
    expect(top3.body.members).toEqual([
      { member: 'p9', score: 90 },
      { member: 'p8', score: 80 },
      { member: 'p7', score: 70 },
    ]);
    expect(top3.body.more).toBe(true);
    const last = await api().get('/store/zset/r-top?rev=true&offset=8&limit=3');
    expect(last.body).toEqual({
      members: [
        { member: 'p1', score: 10 },
        { member: 'p0', score: 0 },
      ],
      offset: 8,
      more: false,
      ttl: -1,
    });
    const past = await api().get('/store/zset/r-top?offset=50');
    expect([past.status, past.body.members]).toEqual([200, []]);
  });

  test('when the page parameters are out of range, then 400 invalid_request', async () => {
    for (const q of ['limit=0', 'limit=1001', 'offset=-1', 'rev=yes', 'limit=abc']) {
      const res = await api().get(`/store/zset/r-rank?${q}`);
      expect([q, res.status, res.body.error]).toEqual([q, 400, 'invalid_request']);
    }
  });

  test('when the key is missing, then 404 not_found; when it holds a string, then 409 wrong_type', async () => {
    expect((await api().get('/store/zset/r-missing')).status).toBe(404);
    await redis().set(raw('r-string'), 'v');
    const res = await api().get('/store/zset/r-string');
    expect([res.status, res.body.error]).toEqual([409, 'wrong_type']);
  });
});

describe('reading by score', () => {
  test('when min and max are given, then the members within them come, inclusive or exclusive with (', async () => {
    await seed('s-range');
    const inclusive = await api().get('/store/zset/s-range/range?min=20&max=40');
    expect(inclusive.body.members.map((m: { member: string }) => m.member)).toEqual(['p2', 'p3', 'p4']);
    const exclusive = await api().get('/store/zset/s-range/range?min=(20&max=(40');
    expect(exclusive.body.members).toEqual([{ member: 'p3', score: 30 }]);
    expectSchema('ZsetPageResponse', exclusive.body);
  });

  test('when rev is true, then min and max still mean low and high, highest first, paged by offset and limit', async () => {
    await seed('s-rev');
    const res = await api().get('/store/zset/s-rev/range?min=15&max=75&rev=true&offset=1&limit=2');
    expect(res.body.members).toEqual([
      { member: 'p6', score: 60 },
      { member: 'p5', score: 50 },
    ]);
    expect(res.body.more).toBe(true);
  });

  test('when bounds are infinite, then infinite scores are answered as "+inf" and "-inf"', async () => {
    await redis().zadd(raw('s-inf'), '-inf', 'bottom', 0, 'zero', '+inf', 'top');
    const res = await api().get('/store/zset/s-inf/range?min=-inf&max=%2Binf');
    expect(res.body.members).toEqual([
      { member: 'bottom', score: '-inf' },
      { member: 'zero', score: 0 },
      { member: 'top', score: '+inf' },
    ]);
    expectSchema('ZsetPageResponse', res.body);
    const defaults = await api().get('/store/zset/s-inf/range?min=(-inf&max=(inf');
    expect(defaults.body.members).toEqual([{ member: 'zero', score: 0 }]);
  });

  test('when a bound is not a score, then 400 invalid_request', async () => {
    for (const q of ['min=abc', 'max=nan', 'min=((1', 'max=1e']) {
      const res = await api().get(`/store/zset/s-range/range?${q}`);
      expect([q, res.status, res.body.error]).toEqual([q, 400, 'invalid_request']);
    }
  });
});
