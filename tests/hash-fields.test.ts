// Hash fields end to end: /store/hash/{key}/field/{field}, and field names that look like JS internals.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('hash-fields');
});
afterAll(() => t.close());

const api = () => request(t.data);
const raw = (key: string) => `${t.prefix}${key}`;
/** Sends a JSON text as is (an object literal with a '__proto__' key would set a prototype instead). */
const postJson = (path: string, json: string) =>
  api().post(path).set('Content-Type', 'application/json').send(json);

describe('one field', () => {
  test('GET answers the field and its value', async () => {
    await t.raw.hset(raw('f-read'), 'email', 'ada@example.com');
    const res = await api().get('/store/hash/f-read/field/email');
    expect(res.body).toEqual({ field: 'email', value: 'ada@example.com', ttl: -1 });
  });

  test.each([
    ['the field is missing', 'f-missing'],
    ['the whole hash is missing', 'f-no-hash'],
  ])('when %s, then 404 field_not_found naming field and key', async (_what, key) => {
    await t.raw.hset(raw('f-missing'), 'other', 'x');
    const res = await api().get(`/store/hash/${key}/field/nope`);
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('field_not_found');
    expect(res.body.message).toMatch(new RegExp(`nope.*${key}`));
  });

  test('POST creates a field with 201, replaces it with 200, and keeps the expiry', async () => {
    const created = await api().post('/store/hash/f-write/field/a').send({ value: '1' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ success: true, field: 'a', value: '1' });
    expect(await t.raw.ttl(raw('f-write'))).toBe(-1);
    await t.raw.expire(raw('f-write'), 500);
    const replaced = await api().post('/store/hash/f-write/field/a').send({ value: '2' });
    expect(replaced.status).toBe(200);
    expect(await t.raw.hget(raw('f-write'), 'a')).toBe('2');
    expect(await t.raw.ttl(raw('f-write'))).toBeGreaterThan(400);
  });

  test('POST with If-None-Match: * creates a new field and refuses an existing one with 409 field_exists', async () => {
    const fresh = await api()
      .post('/store/hash/f-cond/field/a')
      .set('If-None-Match', '*')
      .send({ value: '1' });
    expect(fresh.status).toBe(201);
    const again = await api()
      .post('/store/hash/f-cond/field/a')
      .set('If-None-Match', '*')
      .send({ value: '2' });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('field_exists');
    expect(await t.raw.hget(raw('f-cond'), 'a')).toBe('1');
  });

  test.each([
    [{ value: 5 }, 'invalid_value'],
    [{}, 'invalid_value'],
    [{ value: 'v', ttl: 'soon' }, 'invalid_ttl'],
  ])('POST with body %p is 400 %s', async (body, error) => {
    const res = await api().post('/store/hash/f-bad/field/a').send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(error);
  });

  test('a field name over 1024 characters in the path is 400 invalid_field', async () => {
    const res = await api().get(`/store/hash/f-long/field/${'x'.repeat(1025)}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_field');
  });

  test('a URL-encoded field name (space, slash, unicode) round-trips', async () => {
    const field = 'a b/c é🚀';
    await api()
      .post(`/store/hash/f-enc/field/${encodeURIComponent(field)}`)
      .send({ value: 'v' });
    expect(await t.raw.hget(raw('f-enc'), field)).toBe('v');
    expect((await api().get(`/store/hash/f-enc/field/${encodeURIComponent(field)}`)).body.field).toBe(field);
  });

  test('DELETE is idempotent and removes the hash with its last field', async () => {
    await t.raw.hset(raw('f-del'), 'a', '1', 'b', '2');
    expect((await api().delete('/store/hash/f-del/field/a')).body).toEqual({ success: true, deleted: true });
    expect((await api().delete('/store/hash/f-del/field/a')).body).toEqual({ success: true, deleted: false });
    await api().delete('/store/hash/f-del/field/b');
    expect(await t.raw.exists(raw('f-del'))).toBe(0);
    const missingHash = await api().delete('/store/hash/f-del/field/b');
    expect(missingHash.status).toBe(200);
    expect(missingHash.body.deleted).toBe(false);
  });

  test('DELETE with If-Match: * deletes an existing field and is 404 field_not_found for a missing one', async () => {
    await t.raw.hset(raw('f-del-cond'), 'a', '1');
    expect((await api().delete('/store/hash/f-del-cond/field/a').set('If-Match', '*')).status).toBe(200);
    const missing = await api().delete('/store/hash/f-del-cond/field/a').set('If-Match', '*');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('field_not_found');
    expect((await api().delete('/store/hash/f-del-cond/field/a').set('If-Match', 'x')).status).toBe(400);
  });
});

describe('field names are data', () => {
  const names = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];
  const fieldsJson = JSON.stringify(Object.fromEntries(names.map((n) => [n, `v-${n}`])));
  const expected = JSON.parse(fieldsJson) as Record<string, string>;

  test('they round-trip through POST and GET of the whole hash, keys and values', async () => {
    const res = await postJson('/store/hash/proto', `{"fields": ${fieldsJson}}`);
    expect(res.status).toBe(201);
    expect(res.body.fields_count).toBe(names.length);
    expect(JSON.parse((await api().get('/store/hash/proto')).text).fields).toEqual(expected);
    expect((await api().get('/store/hash/proto/keys')).body.keys.sort()).toEqual([...names].sort());
    expect((await api().get('/store/hash/proto/values')).body.values.sort()).toEqual(
      names.map((n) => `v-${n}`).sort(),
    );
    expect(await t.raw.hget(raw('proto'), '__proto__')).toBe('v-__proto__');
  });

  test.each(names)('%s round-trips through the field endpoints', async (name) => {
    const path = `/store/hash/proto-field/field/${name}`;
    expect((await api().post(path).send({ value: 'x' })).status).toBe(201);
    expect((await api().get(path)).body).toEqual({ field: name, value: 'x', ttl: -1 });
    expect((await api().delete(path).set('If-Match', '*')).body.deleted).toBe(true);
  });
});
