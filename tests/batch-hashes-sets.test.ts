// The hash and set batches: every item type, per-item failures, validation first, one transaction.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('batch-hs');
});
afterAll(() => t.close());
const batch = (family: 'hash' | 'set', operations: unknown[]) =>
  request(t.data).post(`/store/${family}/batch`).send({ operations });
const raw = (key: string) => `${t.prefix}${key}`;

describe('a hash batch', () => {
  test('when it uses every item type, then results come in request order with the single endpoints’ shapes', async () => {
    const res = await batch('hash', [
      { type: 'set', key: 'h1', fields: { a: '1', b: '2' }, ttl: 100 },
      { type: 'get', key: 'h1' },
      { type: 'setField', key: 'h1', field: 'c', value: '3' },
      { type: 'getField', key: 'h1', field: 'c' },
      { type: 'deleteField', key: 'h1', field: 'a' },
      { type: 'exists', key: 'h1' },
      { type: 'keys', key: 'h1' },
      { type: 'values', key: 'h1' },
      { type: 'expire', key: 'h1', ttl: 50 },
      { type: 'delete', key: 'h1' },
      { type: 'exists', key: 'h1' },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.atomic).toBe(true);
    expect(res.body.results).toEqual([
      { type: 'set', success: true, key: 'h1', fields_count: 2 },
      { type: 'get', success: true, fields: { a: '1', b: '2' }, ttl: 100, etag: expect.any(String) },
      { type: 'setField', success: true, field: 'c', value: '3' },
      { type: 'getField', success: true, field: 'c', value: '3', ttl: -1 },
      { type: 'deleteField', success: true, deleted: true },
      { type: 'exists', success: true, exists: true },
      { type: 'keys', success: true, keys: expect.arrayContaining(['b', 'c']) },
      { type: 'values', success: true, values: expect.arrayContaining(['2', '3']) },
      { type: 'expire', success: true, ttl: 50 },
      { type: 'delete', success: true, deleted: true },
      { type: 'exists', success: true, exists: false },
    ]);
  });

  test('when field names are __proto__ and constructor, then they are data', async () => {
    const fields = JSON.parse('{"__proto__": "p", "constructor": "c"}');
    const res = await batch('hash', [
      { type: 'set', key: 'h-proto', fields },
      { type: 'get', key: 'h-proto' },
    ]);
    expect(res.text).toContain('"fields":{"__proto__":"p","constructor":"c"}');
    expect(await t.raw.hgetall(raw('h-proto'))).toEqual(JSON.parse('{"__proto__": "p", "constructor": "c"}'));
  });

  test('when an item meets a key of another type, then that item alone fails with wrong_type', async () => {
    await t.raw.set(raw('h-string'), 'v');
    const res = await batch('hash', [
      { type: 'setField', key: 'h-ok', field: 'f', value: 'v' },
      { type: 'setField', key: 'h-string', field: 'f', value: 'v' },
      { type: 'getField', key: 'h-ok', field: 'missing' },
      { type: 'get', key: 'h-none' },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { success: boolean }) => r.success)).toEqual([true, false, false, false]);
    expect(res.body.results[1].error).toMatchObject({ error: 'wrong_type', status: 409 });
    expect(res.body.results[2].error).toMatchObject({ error: 'field_not_found', status: 404 });
    expect(res.body.results[3].error).toMatchObject({ error: 'not_found', status: 404 });
    expect(await t.raw.get(raw('h-string'))).toBe('v');
    expect(await t.raw.hget(raw('h-ok'), 'f')).toBe('v');
  });
});

describe('a set batch', () => {
  test('when it uses every item type, then results come in request order with the single endpoints’ shapes', async () => {
    const res = await batch('set', [
      { type: 'add', key: 's1', members: ['a', 'b', 'a'] },
      { type: 'get', key: 's1' },
      { type: 'addMember', key: 's1', member: 'c' },
      { type: 'addMember', key: 's1', member: 'c' },
      { type: 'isMember', key: 's1', member: 'c' },
      { type: 'removeMember', key: 's1', member: 'a' },
      { type: 'cardinality', key: 's1' },
      { type: 'pop', key: 's1' },
      { type: 'expire', key: 's1', ttl: 10 },
      { type: 'delete', key: 's1' },
    ]);
    expect(res.status).toBe(200);
    const results = res.body.results;
    expect(results[0]).toEqual({ type: 'add', success: true, key: 's1', members_count: 2, added: 2 });
    expect(results[1]).toEqual({
      type: 'get',
      success: true,
      members: expect.arrayContaining(['a', 'b']),
      cardinality: 2,
      ttl: -1,
      etag: expect.any(String),
    });
    expect(results[2]).toEqual({ type: 'addMember', success: true, member: 'c', added: true });
    expect(results[3]).toEqual({ type: 'addMember', success: true, member: 'c', added: false });
    expect(results[4]).toEqual({ type: 'isMember', success: true, exists: true });
    expect(results[5]).toEqual({ type: 'removeMember', success: true, member: 'a', removed: true });
    expect(results[6]).toEqual({ type: 'cardinality', success: true, cardinality: 2 });
    expect(['b', 'c']).toContain(results[7].member);
    expect(results[8]).toEqual({ type: 'expire', success: true, ttl: 10 });
    expect(results[9]).toEqual({ type: 'delete', success: true, deleted: true });
  });

  test('when pop meets a missing set, then that item fails with not_found and the rest apply', async () => {
    const res = await batch('set', [
      { type: 'pop', key: 's-none' },
      { type: 'addMember', key: 's-after', member: 'm' },
    ]);
    expect(res.body.results[0]).toMatchObject({ success: false, error: { error: 'not_found' } });
    expect(await t.raw.sismember(raw('s-after'), 'm')).toBe(1);
  });

  test('when it holds 1000 addMember items, then every member is added', async () => {
    const ops = Array.from({ length: 1000 }, (_, i) => ({
      type: 'addMember',
      key: 's-many',
      member: `m${i}`,
    }));
    const res = await batch('set', ops);
    expect(res.status).toBe(200);
    expect(await t.raw.scard(raw('s-many'))).toBe(1000);
  });
});

describe('invalid hash and set batches execute nothing', () => {
  test.each([
    {
      family: 'hash',
      what: 'an empty fields object',
      bad: { type: 'set', key: 'k', fields: {} },
      error: 'invalid_value',
    },
    {
      family: 'hash',
      what: 'a non-string value',
      bad: { type: 'setField', key: 'k', field: 'f', value: 2 },
      error: 'invalid_value',
    },
    { family: 'hash', what: 'a missing field', bad: { type: 'getField', key: 'k' }, error: 'invalid_field' },
    { family: 'hash', what: 'an unknown type', bad: { type: 'hincrby', key: 'k' }, error: 'invalid_request' },
    {
      family: 'set',
      what: 'an empty members array',
      bad: { type: 'add', key: 'k', members: [] },
      error: 'invalid_value',
    },
    {
      family: 'set',
      what: 'an empty member',
      bad: { type: 'addMember', key: 'k', member: '' },
      error: 'invalid_member',
    },
    { family: 'set', what: 'a bad key', bad: { type: 'pop', key: 'k k' }, error: 'invalid_key' },
    {
      family: 'set',
      what: 'a string type',
      bad: { type: 'set', key: 'k', value: 'v' },
      error: 'invalid_request',
    },
  ] as const)(
    '$family: when item 1 has $what, then 400 $error naming index 1',
    async ({ family, bad, error }) => {
      const first =
        family === 'hash'
          ? { type: 'setField', key: 'untouched', field: 'f', value: 'v' }
          : { type: 'addMember', key: 'untouched', member: 'm' };
      const res = await batch(family, [first, bad]);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(error);
      expect(res.body.details.index).toBe(1);
      expect(res.body.message).toContain('operations[1]');
      expect(await t.raw.exists(raw('untouched'))).toBe(0);
    },
  );
});
