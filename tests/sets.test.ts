// The set family end to end: /store/set/... (whole sets, members, cardinality, pop, TTL) against a real Redis.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('sets');
});
afterAll(() => t.close());

const api = () => request(t.data);
const raw = (key: string) => `${t.prefix}${key}`;
const members = async (key: string) => (await t.raw.smembers(raw(key))).sort();

describe('writing a set', () => {
  test('when the key is new, then 201 with members_count and added; duplicates are dropped', async () => {
    const res = await api()
      .post('/store/set/roles')
      .send({ members: ['admin', 'editor', 'editor'] });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ success: true, key: 'roles', members_count: 2, added: 2 });
    expect(await members('roles')).toEqual(['admin', 'editor']);
    expect(await t.raw.ttl(raw('roles'))).toBe(-1);
  });

  test('when the set exists, then 200, the members are merged, and added counts the new ones', async () => {
    await t.raw.sadd(raw('merge'), 'a', 'b');
    const res = await api()
      .post('/store/set/merge')
      .send({ members: ['b', 'c'] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, key: 'merge', members_count: 3, added: 1 });
    expect(await members('merge')).toEqual(['a', 'b', 'c']);
  });

  test('when merging without ttl, then the expiry is kept; with ttl, it is set', async () => {
    await t.raw.sadd(raw('merge-ttl'), 'a');
    await t.raw.expire(raw('merge-ttl'), 500);
    await api()
      .post('/store/set/merge-ttl')
      .send({ members: ['b'] });
    expect(await t.raw.ttl(raw('merge-ttl'))).toBeGreaterThan(400);
    await api()
      .post('/store/set/merge-ttl')
      .send({ members: ['c'], ttl: 50 });
    expect(await t.raw.ttl(raw('merge-ttl'))).toBeLessThanOrEqual(50);
  });

  test('when mode is replace, then the old members and the expiry are gone', async () => {
    await t.raw.sadd(raw('replace'), 'old', 'keep');
    await t.raw.expire(raw('replace'), 500);
    const res = await api()
      .post('/store/set/replace')
      .send({ members: ['keep', 'new', 'new'], mode: 'replace' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, key: 'replace', members_count: 2, added: 2 });
    expect(await members('replace')).toEqual(['keep', 'new']);
    expect(await t.raw.ttl(raw('replace'))).toBe(-1);
  });

  test('when mode is replace with a ttl, then the new set expires after it', async () => {
    await t.raw.sadd(raw('replace-ttl'), 'old');
    await api()
      .post('/store/set/replace-ttl')
      .send({ members: ['a'], mode: 'replace', ttl: 100 });
    expect(await t.raw.ttl(raw('replace-ttl'))).toBeGreaterThan(90);
    expect(await members('replace-ttl')).toEqual(['a']);
  });

  test('when thousands of members are sent, then every one is stored', async () => {
    const many = Array.from({ length: 3000 }, (_, i) => `m${i}`);
    const res = await api().post('/store/set/wide').send({ members: many });
    expect(res.body).toMatchObject({ members_count: 3000, added: 3000 });
    expect(await t.raw.scard(raw('wide'))).toBe(3000);
  });

  test('when If-None-Match: * is sent, then a new key is created and an existing one is 409 key_exists', async () => {
    const fresh = await api()
      .post('/store/set/cond')
      .set('If-None-Match', '*')
      .send({ members: ['a'] });
    expect(fresh.status).toBe(201);
    const again = await api()
      .post('/store/set/cond')
      .set('If-None-Match', '*')
      .send({ members: ['b'] });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('key_exists');
    expect(await members('cond')).toEqual(['a']);
  });

  test.each([
    ['members missing', 'invalid_value', {}],
    ['members not an array', 'invalid_value', { members: 'a' }],
    ['members empty', 'invalid_value', { members: [] }],
    ['a member that is a number', 'invalid_member', { members: ['a', 5] }],
    ['an empty member', 'invalid_member', { members: [''] }],
    ['an unknown mode', 'invalid_request', { members: ['a'], mode: 'append' }],
    ['a fractional ttl', 'invalid_ttl', { members: ['a'], ttl: 1.5 }],
    ['an unknown property', 'invalid_request', { members: ['a'], member: 'b' }],
  ])('when the body has %s, then 400 %s and nothing is written', async (_what, error, body) => {
    const res = await api().post('/store/set/bad-body').send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(error);
    expect(await t.raw.exists(raw('bad-body'))).toBe(0);
  });

  test('when there are more than 10,000 members, then 400 invalid_value', async () => {
    const res = await api()
      .post('/store/set/too-wide')
      .send({ members: Array.from({ length: 10_001 }, (_, i) => `${i}`) });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_value');
  });
});

describe('reading a set', () => {
  test('when the set exists, then its members, cardinality and ttl', async () => {
    await t.raw.sadd(raw('read'), 'a', 'b', 'c');
    const res = await api().get('/store/set/read');
    expect(res.status).toBe(200);
    expect(res.body.members.sort()).toEqual(['a', 'b', 'c']);
    expect(res.body).toMatchObject({ cardinality: 3, ttl: -1 });
  });

  test('cardinality counts the members', async () => {
    await t.raw.sadd(raw('count'), 'a', 'b');
    expect((await api().get('/store/set/count/cardinality')).body).toEqual({ cardinality: 2 });
  });

  test.each(['', '/cardinality', '/ttl'])(
    'when the key is missing, then GET /store/set/{key}%s is 404 not_found naming the key',
    async (suffix) => {
      const res = await api().get(`/store/set/no-such-set${suffix}`);
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('not_found');
      expect(res.body.message).toContain('no-such-set');
    },
  );
});

describe('one member', () => {
  test('POST adds a new member with 201 and an existing one with 200 added: false', async () => {
    const added = await api().post('/store/set/m-add/member/admin').set('Content-Type', 'application/json');
    expect(added.status).toBe(201);
    expect(added.body).toEqual({ success: true, member: 'admin', added: true });
    const again = await api().post('/store/set/m-add/member/admin').set('Content-Type', 'application/json');
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ success: true, member: 'admin', added: false });
    expect(await members('m-add')).toEqual(['admin']);
  });

  test('POST keeps the expiry of the set', async () => {
    await t.raw.sadd(raw('m-ttl'), 'a');
    await t.raw.expire(raw('m-ttl'), 500);
    await api().post('/store/set/m-ttl/member/b').set('Content-Type', 'application/json');
    expect(await t.raw.ttl(raw('m-ttl'))).toBeGreaterThan(400);
  });

  test('POST with If-None-Match: * adds a new member and is 409 duplicate_member for an existing one', async () => {
    expect(
      (
        await api()
          .post('/store/set/m-cond/member/a')
          .set('Content-Type', 'application/json')
          .set('If-None-Match', '*')
      ).status,
    ).toBe(201);
    const dup = await api()
      .post('/store/set/m-cond/member/a')
      .set('Content-Type', 'application/json')
      .set('If-None-Match', '*');
    expect(dup.status).toBe(409);
    expect(dup.body.error).toBe('duplicate_member');
    expect(dup.body.message).toMatch(/'a'.*m-cond/);
  });

  test('a URL-encoded member round-trips; one over 1024 characters is 400 invalid_member', async () => {
    const member = 'a b/c é🚀';
    await api()
      .post(`/store/set/m-enc/member/${encodeURIComponent(member)}`)
      .set('Content-Type', 'application/json');
    expect(await t.raw.sismember(raw('m-enc'), member)).toBe(1);
    const long = await api()
      .post(`/store/set/m-enc/member/${'x'.repeat(1025)}`)
      .set('Content-Type', 'application/json');
    expect(long.status).toBe(400);
    expect(long.body.error).toBe('invalid_member');
  });

  test('exists answers true or false; a missing set holds no member', async () => {
    await t.raw.sadd(raw('m-exists'), 'a');
    expect((await api().get('/store/set/m-exists/member/a/exists')).body).toEqual({ exists: true });
    expect((await api().get('/store/set/m-exists/member/b/exists')).body).toEqual({ exists: false });
    const missing = await api().get('/store/set/m-none/member/a/exists');
    expect(missing.status).toBe(200);
    expect(missing.body).toEqual({ exists: false });
  });

  test('DELETE is idempotent and removes the set with its last member', async () => {
    await t.raw.sadd(raw('m-del'), 'a');
    const removed = await api().delete('/store/set/m-del/member/a');
    expect(removed.body).toEqual({ success: true, member: 'a', removed: true });
    expect(await t.raw.exists(raw('m-del'))).toBe(0);
    const again = await api().delete('/store/set/m-del/member/a');
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ success: true, member: 'a', removed: false });
  });

  test('DELETE with If-Match: * removes an existing member and is 404 member_not_found for a missing one', async () => {
    await t.raw.sadd(raw('m-del-cond'), 'a', 'b');
    expect((await api().delete('/store/set/m-del-cond/member/a').set('If-Match', '*')).status).toBe(200);
    const missing = await api().delete('/store/set/m-del-cond/member/a').set('If-Match', '*');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('member_not_found');
    expect(await members('m-del-cond')).toEqual(['b']);
  });
});

describe('pop', () => {
  test('removes and answers a member, keeps the expiry, and removes the set with its last member', async () => {
    await t.raw.sadd(raw('pop'), 'a', 'b');
    await t.raw.expire(raw('pop'), 500);
    const first = await api().post('/store/set/pop/pop').set('Content-Type', 'application/json');
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ success: true, member: expect.stringMatching(/^[ab]$/) });
    expect(await t.raw.ttl(raw('pop'))).toBeGreaterThan(400);
    const second = await api().post('/store/set/pop/pop').set('Content-Type', 'application/json');
    expect([first.body.member, second.body.member].sort()).toEqual(['a', 'b']);
    expect(await t.raw.exists(raw('pop'))).toBe(0);
  });

  test('on a missing set is 404 not_found naming the key', async () => {
    const res = await api().post('/store/set/pop-none/pop').set('Content-Type', 'application/json');
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
    expect(res.body.message).toContain('pop-none');
  });
});

describe('deleting, ttl, expire and persist', () => {
  test('DELETE removes the set, and is idempotent', async () => {
    await t.raw.sadd(raw('del'), 'a');
    expect((await api().delete('/store/set/del')).body).toEqual({ success: true, deleted: true });
    expect((await api().delete('/store/set/del')).body).toEqual({ success: true, deleted: false });
  });

  test('ttl, expire and DELETE ttl manage the expiry; each is 404 on a missing key', async () => {
    await t.raw.sadd(raw('exp'), 'a');
    expect((await api().get('/store/set/exp/ttl')).body).toEqual({ ttl: -1 });
    expect((await api().post('/store/set/exp/expire').send({ ttl: 60 })).body).toEqual({
      success: true,
      ttl: 60,
    });
    expect((await api().get('/store/set/exp/ttl')).body.ttl).toBeGreaterThan(50);
    expect((await api().delete('/store/set/exp/ttl')).body).toEqual({ success: true, ttl: -1 });
    expect(await t.raw.ttl(raw('exp'))).toBe(-1);
    expect((await api().post('/store/set/ghost/expire').send({ ttl: 60 })).status).toBe(404);
    expect((await api().delete('/store/set/ghost/ttl')).status).toBe(404);
  });

  test('the /api alias serves the same set', async () => {
    await api().post('/api/set/alias/member/x').set('Content-Type', 'application/json');
    expect((await api().get('/store/set/alias')).body.members).toEqual(['x']);
  });
});
