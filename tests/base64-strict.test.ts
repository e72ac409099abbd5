// Canonical base64 only, wherever base64 is accepted (bodies, path segments, queries, batch items, page cursors,
// Basic credentials): a text another encoder could not have written is 400 naming the field, and changes nothing.
import request from 'supertest';
import { decodeCanonical } from '../src/base64';
import { openapiDocument, type TestApp, testApp } from './support/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('base64-strict');
});
afterAll(() => t.close());

const api = () => request(t.data);
const NOT_CANONICAL = ['a==', '==', 'abcde=', 'aR', 'aR==', 'hasOwnProperty', 'aQ=', 'aQ==x', 'a', 'aQ==\n'];

test('decodeCanonical takes canonical base64 with or without padding, and canonical base64url', () => {
  expect(decodeCanonical('aQ==')?.toString()).toBe('i');
  expect(decodeCanonical('aQ')?.toString()).toBe('i');
  expect(decodeCanonical('')?.length).toBe(0);
  for (const text of NOT_CANONICAL) expect(decodeCanonical(text)).toBeUndefined();
  expect(decodeCanonical('_-8', true)?.equals(Buffer.from([0xff, 0xef]))).toBe(true);
  expect(decodeCanonical('_-9', true)).toBeUndefined();
  expect(decodeCanonical('aQ==', true)).toBeUndefined();
});

describe('a value that is not canonical base64', () => {
  test.each(NOT_CANONICAL)(
    'when a string value is %j, then 400 naming value and nothing is written',
    async (v) => {
      const res = await api().post('/store/string/b64').send({ value: v, encoding: 'base64' });
      expect([res.status, res.body.error]).toEqual([400, 'invalid_value']);
      expect(res.body.message).toMatch(/value is not canonical base64/);
      expect(await t.raw.exists(`${t.prefix}b64`)).toBe(0);
    },
  );

  test('when a path field or member is not canonical, then 400 naming it and nothing is written', async () => {
    const field = await api()
      .post('/store/hash/b64h/field/hasOwnProperty?encoding=base64')
      .send({ value: 'dg==', encoding: 'base64' });
    expect([field.status, field.body.message]).toEqual([
      400,
      expect.stringMatching(/field is not canonical/),
    ]);
    const member = await api().post('/store/set/b64s/member/aR?encoding=base64');
    expect([member.status, member.body.message]).toEqual([
      400,
      expect.stringMatching(/member is not canonical/),
    ]);
    const read = await api().get('/store/hash/b64h/field/aR?encoding=base64');
    expect(read.status).toBe(400);
    expect(await t.raw.exists(`${t.prefix}b64h`, `${t.prefix}b64s`)).toBe(0);
  });

  test('when aQ and aR would name the same field, then only the canonical aQ is taken', async () => {
    await api()
      .post('/store/hash/b64same')
      .send({ fields: { aQ: 'dg==' }, encoding: 'base64' })
      .expect(201);
    const other = await api()
      .post('/store/hash/b64same')
      .send({ fields: { aR: 'dg==' }, encoding: 'base64' });
    expect([other.status, other.body.message]).toEqual([400, expect.stringMatching(/name in fields/)]);
    expect(await t.raw.hgetall(`${t.prefix}b64same`)).toEqual({ i: 'v' });
  });

  test('when a batch item holds one, then 400 naming the item’s field and no item runs', async () => {
    const res = await api()
      .post('/store/set/batch')
      .send({
        encoding: 'base64',
        operations: [
          { type: 'add', key: 'b64b', members: ['aQ=='] },
          { type: 'add', key: 'b64b', members: ['aQ', 'a=='] },
        ],
      });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/members\[1\]/);
    expect(await t.raw.exists(`${t.prefix}b64b`)).toBe(0);
  });
});

test('when a hash page cursor has junk after its base64url, then 400 invalid_request', async () => {
  await t.raw.hset(`${t.prefix}b64page`, 'a', '1', 'b', '2', 'c', '3');
  const first = await api().get('/store/hash/b64page').query({ limit: 1 }).expect(200);
  expect(first.body.cursor).not.toBe('');
  const junk = await api()
    .get('/store/hash/b64page')
    .query({ limit: 1, cursor: `${first.body.cursor}!` });
  expect([junk.status, junk.body.error]).toEqual([400, 'invalid_request']);
  const padded = await api().get('/store/set/b64page').query({ cursor: 'WyIwIiwiMiJd!' });
  expect(padded.status).toBe(400);
});

test('when a route names a field or member in its path, then openapi.yaml declares ?encoding= or a body encoding', () => {
  const doc = openapiDocument() as { paths: Record<string, Record<string, Record<string, unknown>>> };
  const missing: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!/\{(field|member)\}/.test(path)) continue;
    for (const [method, op] of Object.entries(item)) {
      if (method === 'parameters') continue;
      const params = JSON.stringify(op.parameters ?? []);
      const body = JSON.stringify(op.requestBody ?? '');
      const inBody = /FieldWrite|ZsetMemberWrite|MemberWrite/.test(body);
      if (!params.includes('parameters/Encoding') && !inBody) missing.push(`${method} ${path}`);
    }
  }
  expect(missing).toEqual([]);
});

test('when ?encoding=base64 names a member in the path of an incr or a delete, then it is decoded', async () => {
  await api().post('/store/zset/b64z/member/aQ/incr?encoding=base64').send({ by: 2 }).expect(201);
  expect(await t.raw.zscore(`${t.prefix}b64z`, 'i')).toBe('2');
  await api().delete('/store/zset/b64z/member/aQ?encoding=base64').expect(200);
  expect(await t.raw.exists(`${t.prefix}b64z`)).toBe(0);
});
