// The string family end to end: /store/string/... against a real Redis.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('strings');
});
afterAll(() => t.close());

const api = () => request(t.data);
const raw = (key: string) => `${t.prefix}${key}`;

describe('writing a string', () => {
  test('when the key is new, then 201 and the value is stored without expiry', async () => {
    const res = await api().post('/store/string/greeting').send({ value: 'hello' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ success: true, key: 'greeting' });
    expect(await t.raw.get(raw('greeting'))).toBe('hello');
    expect(await t.raw.ttl(raw('greeting'))).toBe(-1);
  });

  test('when the key exists, then 200 and the value is replaced', async () => {
    await api().post('/store/string/replace-me').send({ value: 'one' });
    const res = await api().post('/store/string/replace-me').send({ value: 'two' });
    expect(res.status).toBe(200);
    expect(await t.raw.get(raw('replace-me'))).toBe('two');
  });

  test('when a ttl is given, then the key expires after it', async () => {
    await api().post('/store/string/with-ttl').send({ value: 'v', ttl: 100 });
    const ttl = await t.raw.ttl(raw('with-ttl'));
    expect(ttl).toBeGreaterThan(90);
    expect(ttl).toBeLessThanOrEqual(100);
  });

  test('when a key with a ttl is overwritten without one, then it no longer expires', async () => {
    await api().post('/store/string/ttl-cleared').send({ value: 'v', ttl: 100 });
    await api().post('/store/string/ttl-cleared').send({ value: 'w' });
    expect(await t.raw.ttl(raw('ttl-cleared'))).toBe(-1);
  });

  test('when the value is any JSON string, then it round-trips exactly', async () => {
    const value = 'emoji 🚀, NUL \u0000, quotes "\', newline\n, json {"a":1}';
    await api().post('/store/string/exotic').send({ value });
    const res = await api().get('/store/string/exotic');
    expect(res.body.value).toBe(value);
  });

  test('when the value is the empty string, then it is stored', async () => {
    const res = await api().post('/store/string/empty').send({ value: '' });
    expect(res.status).toBe(201);
    expect((await api().get('/store/string/empty')).body).toEqual({ value: '', ttl: -1 });
  });

  test.each([
    ['a number', { value: 5 }],
    ['a boolean', { value: true }],
    ['an object', { value: { a: 1 } }],
    ['null', { value: null }],
    ['missing', {}],
  ])('when the value is %s, then 400 invalid_value and nothing is written', async (_what, body) => {
    const res = await api().post('/store/string/bad-value').send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_value');
    expect(await t.raw.exists(raw('bad-value'))).toBe(0);
  });

  test.each([0, -5, 1.5, '10', 2147483648])('when the ttl is %p, then 400 invalid_ttl', async (ttl) => {
    const res = await api().post('/store/string/bad-ttl').send({ value: 'v', ttl });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_ttl');
    expect(await t.raw.exists(raw('bad-ttl'))).toBe(0);
  });

  test('when the ttl is the largest allowed, then it is accepted', async () => {
    const res = await api().post('/store/string/max-ttl').send({ value: 'v', ttl: 2147483647 });
    expect(res.status).toBe(201);
  });

  test('when the body has an unknown property, then 400 invalid_request names it', async () => {
    const res = await api().post('/store/string/typo').send({ value: 'v', tll: 5 });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(res.body.message).toContain('tll');
  });

  test('when the value is larger than SVC_MAX_VALUE_BYTES, then 413 payload_too_large', async () => {
    const small = await testApp('strings-small', { SVC_MAX_VALUE_BYTES: '10' });
    try {
      const res = await request(small.data).post('/store/string/big').send({ value: 'ééééééé' });
      expect(res.status).toBe(413);
      expect(res.body.error).toBe('payload_too_large');
      expect(await small.raw.exists(`${small.prefix}big`)).toBe(0);
    } finally {
      await small.close();
    }
  });

  test('when If-None-Match: * is sent and the key is new, then it is created', async () => {
    const res = await api().post('/store/string/cond-new').set('If-None-Match', '*').send({ value: 'v' });
    expect(res.status).toBe(201);
  });

  test('when If-None-Match: * is sent and the key exists, then 409 key_exists and nothing changes', async () => {
    await api().post('/store/string/cond-old').send({ value: 'old' });
    const res = await api().post('/store/string/cond-old').set('If-None-Match', '*').send({ value: 'new' });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('key_exists');
    expect(await t.raw.get(raw('cond-old'))).toBe('old');
  });

  test('when the key holds a hash, then 409 wrong_type and the hash is untouched', async () => {
    await t.raw.hset(raw('a-hash'), 'f', 'v');
    const res = await api().post('/store/string/a-hash').send({ value: 'x' });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('wrong_type');
    expect(res.body.message).toContain('hash');
    expect(await t.raw.hgetall(raw('a-hash'))).toEqual({ f: 'v' });
  });
});

describe('reading a string', () => {
  test('when the key exists, then its value and ttl -1', async () => {
    await t.raw.set(raw('read-me'), 'v');
    expect((await api().get('/store/string/read-me')).body).toEqual({ value: 'v', ttl: -1 });
  });

  test('when the key expires, then its remaining ttl', async () => {
    await t.raw.set(raw('read-ttl'), 'v', 'EX', 50);
    const res = await api().get('/store/string/read-ttl');
    expect(res.body.ttl).toBeGreaterThan(40);
  });

  test('when the key is missing, then 404 not_found naming the key', async () => {
    const res = await api().get('/store/string/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ error: 'not_found', status: 404 });
    expect(res.body.message).toContain('nothing-here');
  });

  test('when the key holds a set, then 409 wrong_type naming key and type', async () => {
    await t.raw.sadd(raw('a-set'), 'm');
    const res = await api().get('/store/string/a-set');
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('wrong_type');
    expect(res.body.message).toMatch(/a-set.*set/);
  });

  test.each(['a b', 'a@b', 'semi;colon', 'x'.repeat(1025)])(
    'when the key is %p, then 400 invalid_key',
    async (key) => {
      const res = await api().get(`/store/string/${encodeURIComponent(key)}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_key');
    },
  );

  test('when the key has a slash encoded in it, then 400 invalid_key', async () => {
    const res = await api().get('/store/string/a%2Fb');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_key');
  });

  test('when the key uses every allowed character, then it works', async () => {
    const key = 'Az09-_:.';
    await api().post(`/store/string/${key}`).send({ value: 'ok' });
    expect((await api().get(`/store/string/${key}`)).body.value).toBe('ok');
  });

  test('when the key is named like a reserved segment, then it can still be read', async () => {
    await t.raw.set(raw('batch'), 'reserved');
    expect((await api().get('/store/string/batch')).body.value).toBe('reserved');
  });
});

describe('deleting a string', () => {
  test('when the key exists, then deleted: true and it is gone', async () => {
    await t.raw.set(raw('del-me'), 'v');
    const res = await api().delete('/store/string/del-me');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, deleted: true });
    expect(await t.raw.exists(raw('del-me'))).toBe(0);
  });

  test('when the key is missing, then 200 deleted: false', async () => {
    const res = await api().delete('/store/string/never-was');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, deleted: false });
  });

  test('when the key holds a hash, then 409 wrong_type and it is kept', async () => {
    await t.raw.hset(raw('keep-hash'), 'f', 'v');
    const res = await api().delete('/store/string/keep-hash');
    expect(res.status).toBe(409);
    expect(await t.raw.exists(raw('keep-hash'))).toBe(1);
  });
});

describe('exists, ttl, expire and persist', () => {
  test('exists answers true and false, never 404', async () => {
    await t.raw.set(raw('there'), 'v');
    expect((await api().get('/store/string/there/exists')).body).toEqual({ exists: true });
    const missing = await api().get('/store/string/not-there/exists');
    expect(missing.status).toBe(200);
    expect(missing.body).toEqual({ exists: false });
  });

  test('ttl answers -1 without expiry and 404 for a missing key', async () => {
    await t.raw.set(raw('no-expiry'), 'v');
    expect((await api().get('/store/string/no-expiry/ttl')).body).toEqual({ ttl: -1 });
    expect((await api().get('/store/string/missing/ttl')).status).toBe(404);
  });

  test('expire sets the ttl and answers it', async () => {
    await t.raw.set(raw('expire-me'), 'v');
    const res = await api().post('/store/string/expire-me/expire').send({ ttl: 30 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, ttl: 30 });
    expect(await t.raw.ttl(raw('expire-me'))).toBeGreaterThan(20);
  });

  test('expire on a missing key is 404 not_found and creates nothing', async () => {
    const res = await api().post('/store/string/ghost/expire').send({ ttl: 30 });
    expect(res.status).toBe(404);
    expect(await t.raw.exists(raw('ghost'))).toBe(0);
  });

  test('expire without a ttl is 400 invalid_ttl', async () => {
    await t.raw.set(raw('expire-bad'), 'v');
    const res = await api().post('/store/string/expire-bad/expire').send({});
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_ttl');
  });

  test('DELETE ttl removes the expiry', async () => {
    await t.raw.set(raw('persist-me'), 'v', 'EX', 100);
    const res = await api().delete('/store/string/persist-me/ttl');
    expect(res.body).toEqual({ success: true, ttl: -1 });
    expect(await t.raw.ttl(raw('persist-me'))).toBe(-1);
    expect((await api().delete('/store/string/missing/ttl')).status).toBe(404);
  });

  test('a key that expired reads as not_found', async () => {
    await t.raw.set(raw('short-lived'), 'v', 'PX', 1);
    await new Promise((r) => setTimeout(r, 20));
    expect((await api().get('/store/string/short-lived')).status).toBe(404);
  });
});

describe('the /api alias', () => {
  test('serves the same routes as /store', async () => {
    await api().post('/api/string/alias').send({ value: 'same' });
    expect((await api().get('/store/string/alias')).body.value).toBe('same');
  });
});
