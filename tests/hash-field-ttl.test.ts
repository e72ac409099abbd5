// Hash-field TTLs (HEXPIRE, Redis 8 / Valkey 9) on the one-field write, and their refusal on servers without them.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
let hasFieldTtl = false;
beforeAll(async () => {
  t = await testApp('hash-field-ttl');
  hasFieldTtl = await t.raw.call('HTTL', `${t.prefix}probe`, 'FIELDS', '1', 'f').then(
    () => true,
    () => false,
  );
  if (!hasFieldTtl) console.log('hash-field-ttl: this server has no HEXPIRE; only the refusal is tested');
});
afterAll(() => t.close());

const api = () => request(t.data);
const raw = (key: string) => `${t.prefix}${key}`;
const fieldTtl = async (key: string, field: string) =>
  ((await t.raw.call('HTTL', raw(key), 'FIELDS', '1', field)) as number[])[0];

describe('a field write with ttl, on a server with hash-field expiry', () => {
  test('when ttl is given, then the field expires in ttl seconds and the key keeps no expiry', async () => {
    if (!hasFieldTtl) return;
    await t.raw.hset(raw('ft:1'), 'keep', 'x');
    const res = await api().post('/store/hash/ft:1/field/code').send({ value: '123456', ttl: 300 });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ success: true, field: 'code', value: '123456' });
    const ttl = await fieldTtl('ft:1', 'code');
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300);
    expect(await fieldTtl('ft:1', 'keep')).toBe(-1);
    expect(await t.raw.ttl(raw('ft:1'))).toBe(-1);
  });

  test('when If-None-Match: * finds the field, then 409 and its TTL is unchanged', async () => {
    if (!hasFieldTtl) return;
    await t.raw.hset(raw('ft:2'), 'f', 'old');
    const res = await api()
      .post('/store/hash/ft:2/field/f')
      .set('If-None-Match', '*')
      .send({ value: 'new', ttl: 60 });
    expect(res.status).toBe(409);
    expect(await t.raw.hget(raw('ft:2'), 'f')).toBe('old');
    expect(await fieldTtl('ft:2', 'f')).toBe(-1);
  });

  test('when a write without ttl replaces the field, then the field has no TTL any more', async () => {
    if (!hasFieldTtl) return;
    await api().post('/store/hash/ft:3/field/f').send({ value: 'a', ttl: 60 }).expect(201);
    await api().post('/store/hash/ft:3/field/f').send({ value: 'b' }).expect(200);
    expect(await fieldTtl('ft:3', 'f')).toBe(-1);
  });

  test('when ttl is not a positive integer, then 400 and nothing is written', async () => {
    const res = await api().post('/store/hash/ft:4/field/f').send({ value: 'a', ttl: 0 });
    expect(res.status).toBe(400);
    expect(await t.raw.exists(raw('ft:4'))).toBe(0);
  });
});

describe('a field write with ttl, on a server without hash-field expiry', () => {
  test('then 501 command_refused naming hash-field expiry, and nothing is written', async () => {
    if (hasFieldTtl) return;
    await t.raw.hset(raw('old:1'), 'f', 'before');
    const res = await api().post('/store/hash/old:1/field/f').send({ value: 'after', ttl: 60 });
    expect(res.status).toBe(501);
    expect(res.body.error).toBe('command_refused');
    expect(res.body.message).toMatch(/hash-field expiry/);
    expect(await t.raw.hget(raw('old:1'), 'f')).toBe('before');
    const fresh = await api().post('/store/hash/old:2/field/f').send({ value: 'x', ttl: 60 });
    expect(fresh.status).toBe(501);
    expect(await t.raw.exists(raw('old:2'))).toBe(0);
  });
});
