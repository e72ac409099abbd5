// The hash family end to end: /store/hash/... against a real Redis.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('hashes');
});
afterAll(() => t.close());

const api = () => request(t.data);
const raw = (key: string) => `${t.prefix}${key}`;

describe('writing a hash', () => {
  test('when the key is new, then 201, fields_count, and the hash is stored without expiry', async () => {
    const res = await api()
      .post('/store/hash/user:1')
      .send({ fields: { name: 'Ada', email: 'ada@example.com' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ success: true, key: 'user:1', fields_count: 2 });
    expect(await t.raw.hgetall(raw('user:1'))).toEqual({ name: 'Ada', email: 'ada@example.com' });
    expect(await t.raw.ttl(raw('user:1'))).toBe(-1);
  });

  test('when the hash exists, then 200 and the fields are merged; fields_count is the total', async () => {
    await t.raw.hset(raw('merge'), 'a', '1', 'b', '2');
    const res = await api()
      .post('/store/hash/merge')
      .send({ fields: { b: 'two', c: '3' } });
    expect(res.status).toBe(200);
    expect(res.body.fields_count).toBe(3);
    expect(await t.raw.hgetall(raw('merge'))).toEqual({ a: '1', b: 'two', c: '3' });
  });

  test('when merging without ttl, then the expiry is kept; with ttl, it is set', async () => {
    await t.raw.hset(raw('merge-ttl'), 'a', '1');
    await t.raw.expire(raw('merge-ttl'), 500);
    await api()
      .post('/store/hash/merge-ttl')
      .send({ fields: { b: '2' } });
    expect(await t.raw.ttl(raw('merge-ttl'))).toBeGreaterThan(400);
    await api()
      .post('/store/hash/merge-ttl')
      .send({ fields: { c: '3' }, ttl: 50 });
    expect(await t.raw.ttl(raw('merge-ttl'))).toBeLessThanOrEqual(50);
  });

  test('when mode is replace, then the old fields and the expiry are gone', async () => {
    await t.raw.hset(raw('replace'), 'old', 'x', 'keep', 'y');
    await t.raw.expire(raw('replace'), 500);
    const res = await api()
      .post('/store/hash/replace')
      .send({ fields: { keep: 'z', new: 'n' }, mode: 'replace' });
    expect(res.status).toBe(200);
    expect(res.body.fields_count).toBe(2);
    expect(await t.raw.hgetall(raw('replace'))).toEqual({ keep: 'z', new: 'n' });
    expect(await t.raw.ttl(raw('replace'))).toBe(-1);
  });

  test('when mode is replace with a ttl, then the new hash expires after it', async () => {
    await t.raw.hset(raw('replace-ttl'), 'old', 'x');
    await api()
      .post('/store/hash/replace-ttl')
      .send({ fields: { a: '1' }, mode: 'replace', ttl: 100 });
    expect(await t.raw.ttl(raw('replace-ttl'))).toBeGreaterThan(90);
    expect(await t.raw.hgetall(raw('replace-ttl'))).toEqual({ a: '1' });
  });

  test('when mode is replace and the key is new, then 201', async () => {
    const res = await api()
      .post('/store/hash/replace-new')
      .send({ fields: { a: '1' }, mode: 'replace' });
    expect(res.status).toBe(201);
  });

  test('when thousands of fields are sent, then every one is stored', async () => {
    const fields = Object.fromEntries(Array.from({ length: 2500 }, (_, i) => [`f${i}`, `v${i}`]));
    const res = await api().post('/store/hash/wide').send({ fields });
    expect(res.body.fields_count).toBe(2500);
    expect(await t.raw.hlen(raw('wide'))).toBe(2500);
    expect(await t.raw.hget(raw('wide'), 'f2499')).toBe('v2499');
  });

  test('when values are any JSON strings, then they round-trip exactly', async () => {
    const fields = { emoji: '🚀 ünïcödé', nul: 'a\u0000b', empty: '', json: '{"a":[1]}' };
    await api().post('/store/hash/exotic').send({ fields });
    expect((await api().get('/store/hash/exotic')).body.fields).toEqual(fields);
  });

  test('when If-None-Match: * is sent, then a new key is created and an existing one is 409 key_exists', async () => {
    const fresh = await api()
      .post('/store/hash/cond')
      .set('If-None-Match', '*')
      .send({ fields: { a: '1' } });
    expect(fresh.status).toBe(201);
    const again = await api()
      .post('/store/hash/cond')
      .set('If-None-Match', '*')
      .send({ fields: { a: '2' } });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('key_exists');
    expect(await t.raw.hget(raw('cond'), 'a')).toBe('1');
  });

  test('when If-None-Match has another value than *, then 400 invalid_request', async () => {
    const res = await api()
      .post('/store/hash/cond-bad')
      .set('If-None-Match', '"abc"')
      .send({ fields: { a: '1' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  test.each([
    ['fields missing', 'invalid_value', {}],
    ['fields not an object', 'invalid_value', { fields: ['a'] }],
    ['fields empty', 'invalid_value', { fields: {} }],
    ['a value that is a number', 'invalid_value', { fields: { a: 1 } }],
    ['a value that is null', 'invalid_value', { fields: { a: null } }],
    ['an empty field name', 'invalid_field', { fields: { '': 'v' } }],
    ['an unknown mode', 'invalid_request', { fields: { a: '1' }, mode: 'upsert' }],
    ['a ttl of 0', 'invalid_ttl', { fields: { a: '1' }, ttl: 0 }],
    ['a string ttl', 'invalid_ttl', { fields: { a: '1' }, ttl: '10' }],
    ['an unknown property', 'invalid_request', { fields: { a: '1' }, extra: true }],
  ])('when the body has %s, then 400 %s and nothing is written', async (_what, error, body) => {
    const res = await api().post('/store/hash/bad-body').send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(error);
    expect(await t.raw.exists(raw('bad-body'))).toBe(0);
  });

  test('when there are more than 10,000 fields, then 400 invalid_value', async () => {
    const fields = Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`${i}`, '']));
    const res = await api().post('/store/hash/too-wide').send({ fields });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_value');
  });

  test('when the key is invalid, then 400 invalid_key', async () => {
    const res = await api()
      .post('/store/hash/a%20b')
      .send({ fields: { a: '1' } });
    expect(res.body.error).toBe('invalid_key');
  });

  test('when a value is larger than SVC_MAX_VALUE_BYTES, then 413 and nothing is written', async () => {
    const small = await testApp('hashes-small', { SVC_MAX_VALUE_BYTES: '10' });
    try {
      const api2 = () => request(small.data);
      const whole = await api2()
        .post('/store/hash/big')
        .send({ fields: { ok: 'short', big: 'ééééééé' } });
      expect(whole.status).toBe(413);
      expect(whole.body.message).toContain("'big'");
      const field = await api2()
        .post('/store/hash/big/field/f')
        .send({ value: 'x'.repeat(11) });
      expect(field.status).toBe(413);
      expect(await small.raw.exists(`${small.prefix}big`)).toBe(0);
    } finally {
      await small.close();
    }
  });
});

describe('reading a hash', () => {
  test('when the hash exists, then every field and ttl -1', async () => {
    await t.raw.hset(raw('read'), 'a', '1', 'b', '2');
    const res = await api().get('/store/hash/read');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ fields: { a: '1', b: '2' }, ttl: -1 });
  });

  test('when the hash expires, then its remaining ttl', async () => {
    await t.raw.hset(raw('read-ttl'), 'a', '1');
    await t.raw.expire(raw('read-ttl'), 80);
    expect((await api().get('/store/hash/read-ttl')).body.ttl).toBeGreaterThan(70);
  });

  test('keys and values list the field names and values', async () => {
    await t.raw.hset(raw('kv'), 'a', '1', 'b', '2');
    expect((await api().get('/store/hash/kv/keys')).body.keys.sort()).toEqual(['a', 'b']);
    expect((await api().get('/store/hash/kv/values')).body.values.sort()).toEqual(['1', '2']);
  });

  test.each(['', '/keys', '/values', '/ttl'])(
    'when the key is missing, then GET /store/hash/{key}%s is 404 not_found naming the key',
    async (suffix) => {
      const res = await api().get(`/store/hash/no-such-hash${suffix}`);
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('not_found');
      expect(res.body.message).toContain('no-such-hash');
    },
  );

  test('exists answers true and false, never 404', async () => {
    await t.raw.hset(raw('there'), 'a', '1');
    expect((await api().get('/store/hash/there/exists')).body).toEqual({ exists: true });
    const missing = await api().get('/store/hash/not-there/exists');
    expect(missing.status).toBe(200);
    expect(missing.body).toEqual({ exists: false });
  });

  test('the /api alias serves the same hash', async () => {
    await t.raw.hset(raw('alias'), 'a', '1');
    expect((await api().get('/api/hash/alias/field/a')).body).toEqual({ field: 'a', value: '1', ttl: -1 });
  });
});

describe('deleting, ttl, expire and persist', () => {
  test('DELETE removes the hash, and is idempotent', async () => {
    await t.raw.hset(raw('del'), 'a', '1');
    expect((await api().delete('/store/hash/del')).body).toEqual({ success: true, deleted: true });
    expect((await api().delete('/store/hash/del')).body).toEqual({ success: true, deleted: false });
  });

  test('ttl, expire and DELETE ttl manage the expiry; each is 404 on a missing key', async () => {
    await t.raw.hset(raw('exp'), 'a', '1');
    expect((await api().get('/store/hash/exp/ttl')).body).toEqual({ ttl: -1 });
    expect((await api().post('/store/hash/exp/expire').send({ ttl: 60 })).body).toEqual({
      success: true,
      ttl: 60,
    });
    expect((await api().get('/store/hash/exp/ttl')).body.ttl).toBeGreaterThan(50);
    expect((await api().delete('/store/hash/exp/ttl')).body).toEqual({ success: true, ttl: -1 });
    expect(await t.raw.ttl(raw('exp'))).toBe(-1);
    expect((await api().post('/store/hash/ghost/expire').send({ ttl: 60 })).status).toBe(404);
    expect((await api().delete('/store/hash/ghost/ttl')).status).toBe(404);
    expect((await api().post('/store/hash/exp/expire').send({ ttl: -1 })).body.error).toBe('invalid_ttl');
  });
});
