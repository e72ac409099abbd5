// Sorted set members end to end: one member's score and rank, set, increment, remove; cardinality, pop, whole key.
import { expectSchema } from './support/schemas';
import { zsetTestApp } from './support/zsets';

const { api, raw, redis, all, seed } = zsetTestApp('zset-members');

describe('one member', () => {
  test('when a member is read, then its score, rank and rev_rank come; an absent one is 404 member_not_found', async () => {
    await seed('m-read');
    const res = await api().get('/store/zset/m-read/member/p7');
    expect(res.body).toEqual({ member: 'p7', score: 70, rank: 7, rev_rank: 2 });
    expectSchema('ZsetMemberResponse', res.body);
    const absent = await api().get('/store/zset/m-read/member/nobody');
    expect([absent.status, absent.body.error]).toEqual([404, 'member_not_found']);
    const noKey = await api().get('/store/zset/m-missing/member/p7');
    expect([noKey.status, noKey.body.error]).toEqual([404, 'member_not_found']);
  });

  test('when a score is set, then 201 for a new member and 200 for an existing one; the expiry is kept', async () => {
    const first = await api()
      .post('/store/zset/m-set/member/alice')
      .set('Content-Type', 'application/json')
      .send({ score: 5 });
    expect([first.status, first.body]).toEqual([
      201,
      { success: true, member: 'alice', score: 5, added: true },
    ]);
    await redis().expire(raw('m-set'), 500);
    const second = await api()
      .post('/store/zset/m-set/member/alice')
      .set('Content-Type', 'application/json')
      .send({ score: '-inf' });
    expect([second.status, second.body.added]).toEqual([200, false]);
    expect(await redis().zscore(raw('m-set'), 'alice')).toBe('-inf');
    expect(await redis().ttl(raw('m-set'))).toBeGreaterThan(400);
  });

  test('when If-None-Match: * meets an existing member, then 409 duplicate_member and the score stays', async () => {
    await redis().zadd(raw('m-nx'), 1, 'alice');
    const res = await api()
      .post('/store/zset/m-nx/member/alice')
      .set('Content-Type', 'application/json')
      .set('If-None-Match', '*')
      .send({ score: 9 });
    expect([res.status, res.body.error]).toEqual([409, 'duplicate_member']);
    expect(await redis().zscore(raw('m-nx'), 'alice')).toBe('1');
  });

  test('when the score is not a number, then 400 invalid_value and nothing changes', async () => {
    for (const score of ['5', null, true, 'inf']) {
      const res = await api()
        .post('/store/zset/m-bad/member/alice')
        .set('Content-Type', 'application/json')
        .send({ score });
      expect([score, res.status, res.body.error]).toEqual([score, 400, 'invalid_value']);
    }
    expect(await redis().exists(raw('m-bad'))).toBe(0);
  });

  test('when a member is removed, then removed tells whether it was there; If-Match: * insists', async () => {
    await redis().zadd(raw('m-del'), 1, 'a', 2, 'b');
    const res = await api().delete('/store/zset/m-del/member/a');
    expect(res.body).toEqual({ success: true, member: 'a', removed: true });
    const again = await api().delete('/store/zset/m-del/member/a');
    expect(again.body.removed).toBe(false);
    const strict = await api().delete('/store/zset/m-del/member/a').set('If-Match', '*');
    expect([strict.status, strict.body.error]).toEqual([404, 'member_not_found']);
    expect(await all('m-del')).toEqual(['b', '2']);
  });

  test('when several members are removed, then removed and the cardinality left come back', async () => {
    await redis().zadd(raw('m-remove'), 1, 'a', 2, 'b', 3, 'c');
    const res = await api()
      .post('/store/zset/m-remove/remove')
      .send({ members: ['a', 'b', 'b', 'zzz'] });
    expect(res.body).toEqual({ success: true, removed: 2, cardinality: 1 });
    const missing = await api()
      .post('/store/zset/m-remove-missing/remove')
      .send({ members: ['a'] });
    expect([missing.status, missing.body]).toEqual([200, { success: true, removed: 0, cardinality: 0 }]);
  });
});

describe('incrementing a score', () => {
  const incr = (key: string, member: string, body: object = {}) =>
    api().post(`/store/zset/${key}/member/${member}/incr`).set('Content-Type', 'application/json').send(body);

  test('when the member is missing, then it starts from 0 (201); later calls answer 200 with the new score', async () => {
    const first = await incr('i-score', 'alice', { by: 50, ttl: 60 });
    expect([first.status, first.body]).toEqual([201, { success: true, member: 'alice', score: 50, ttl: 60 }]);
    expectSchema('ZsetIncrResponse', first.body);
    const second = await incr('i-score', 'alice', { by: -0.5, ttl: 9999 });
    expect([second.status, second.body.score]).toEqual([200, 49.5]);
    expect(second.body.ttl).toBeLessThanOrEqual(60);
    const third = await incr('i-score', 'bob');
    expect([third.status, third.body.score]).toEqual([201, 1]);
  });

  test('when the result would be NaN, then 422 not_a_number and the score stays', async () => {
    await redis().zadd(raw('i-nan'), '+inf', 'top');
    const res = await incr('i-nan', 'top', { by: '-inf' });
    expect([res.status, res.body.error]).toEqual([422, 'not_a_number']);
    expect(await redis().zscore(raw('i-nan'), 'top')).toBe('inf');
    const inf = await incr('i-nan', 'other', { by: '+inf' });
    expect(inf.body.score).toBe('+inf');
  });

  test('when the key holds a hash, then 409 wrong_type; a bad by is 400 invalid_value', async () => {
    await redis().hset(raw('i-hash'), 'f', 'v');
    expect((await incr('i-hash', 'a')).body.error).toBe('wrong_type');
    expect((await incr('i-score', 'a', { by: '1' })).body.error).toBe('invalid_value');
  });

  test('when 200 increments run at once, then none is lost', async () => {
    await Promise.all(Array.from({ length: 200 }, () => incr('i-race', 'n')));
    expect(await redis().zscore(raw('i-race'), 'n')).toBe('200');
  });
});

describe('cardinality and pop', () => {
  test('when counted, then ZCARD; with min or max, the members within that range, possibly 0', async () => {
    await seed('c-count');
    expect((await api().get('/store/zset/c-count/cardinality')).body).toEqual({ cardinality: 10 });
    expect((await api().get('/store/zset/c-count/cardinality?min=(50')).body).toEqual({ cardinality: 4 });
    expect((await api().get('/store/zset/c-count/cardinality?min=1000')).body).toEqual({ cardinality: 0 });
    expect((await api().get('/store/zset/c-missing/cardinality')).status).toBe(404);
  });

  test('when popped, then the lowest (default) or highest members come with scores; an empty key is 404', async () => {
    await redis().zadd(raw('c-pop'), 1, 'a', 2, 'b', 3, 'c');
    const low = await api().post('/store/zset/c-pop/pop').set('Content-Type', 'application/json');
    expect(low.body).toEqual({ success: true, members: [{ member: 'a', score: 1 }] });
    const high = await api()
      .post('/store/zset/c-pop/pop')
      .set('Content-Type', 'application/json')
      .send({ end: 'max', count: 5 });
    expect(high.body.members).toEqual([
      { member: 'c', score: 3 },
      { member: 'b', score: 2 },
    ]);
    expectSchema('ZsetPopResponse', high.body);
    const empty = await api().post('/store/zset/c-pop/pop').set('Content-Type', 'application/json');
    expect([empty.status, empty.body.error]).toEqual([404, 'not_found']);
    const bad = await api()
      .post('/store/zset/c-pop/pop')
      .set('Content-Type', 'application/json')
      .send({ count: 0 });
    expect([bad.status, bad.body.error]).toEqual([400, 'invalid_request']);
  });
});

describe('the whole key', () => {
  test('when exists, ttl, expire, persist and delete are used, then they answer like the other families', async () => {
    await redis().zadd(raw('k-key'), 1, 'a');
    expect((await api().get('/store/zset/k-key/exists')).body).toEqual({ exists: true });
    expect((await api().post('/store/zset/k-key/expire').send({ ttl: 100 })).body).toEqual({
      success: true,
      ttl: 100,
    });
    expect((await api().get('/store/zset/k-key/ttl')).body).toEqual({ ttl: 100 });
    expect((await api().delete('/store/zset/k-key/ttl')).body).toEqual({ success: true, ttl: -1 });
    expect((await api().delete('/store/zset/k-key')).body).toEqual({ success: true, deleted: true });
    expect((await api().get('/store/zset/k-key/exists')).body).toEqual({ exists: false });
  });

  test('when a write meets a set, then 409 wrong_type and the set is untouched', async () => {
    await redis().sadd(raw('k-set'), 'a');
    for (const res of [
      await api()
        .post('/store/zset/k-set')
        .send({ members: { a: 1 } }),
      await api()
        .post('/store/zset/k-set/member/a')
        .set('Content-Type', 'application/json')
        .send({ score: 1 }),
      await api()
        .post('/store/zset/k-set/remove')
        .send({ members: ['a'] }),
      await api().post('/store/zset/k-set/pop').set('Content-Type', 'application/json'),
      await api().delete('/store/zset/k-set'),
    ]) {
      expect([res.status, res.body.error]).toEqual([409, 'wrong_type']);
    }
    expect(await redis().smembers(raw('k-set'))).toEqual(['a']);
  });
});
