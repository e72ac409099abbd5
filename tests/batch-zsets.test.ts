// The sorted set batch: every item type, per-item results, validation before anything runs, one transaction.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { expectSchema } from './support/schemas';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('batch-zsets');
});
afterAll(() => t.close());

const batch = (operations: unknown[]) => request(t.data).post('/store/zset/batch').send({ operations });
const raw = (key: string) => `${t.prefix}${key}`;

describe('the sorted set batch', () => {
  test('when it uses every item type, then results come in request order with the single endpoints’ shapes', async () => {
    const res = await batch([
      { type: 'add', key: 'lb', members: { alice: 10, bob: 20, carol: 30, dave: '+inf' }, ttl: 100 },
      { type: 'setMember', key: 'lb', member: 'erin', score: 5 },
      { type: 'incr', key: 'lb', member: 'alice', by: 15 },
      { type: 'get', key: 'lb', rev: true, limit: 2 },
      { type: 'range', key: 'lb', min: 10, max: '(30', offset: 1, limit: 5 },
      { type: 'score', key: 'lb', member: 'alice' },
      { type: 'cardinality', key: 'lb', min: '-inf', max: 20 },
      { type: 'removeMember', key: 'lb', member: 'erin' },
      { type: 'remove', key: 'lb', members: ['carol', 'nobody'] },
      { type: 'pop', key: 'lb', end: 'max' },
      { type: 'exists', key: 'lb' },
      { type: 'ttl', key: 'lb' },
      { type: 'persist', key: 'lb' },
      { type: 'expire', key: 'lb', ttl: 50 },
      { type: 'delete', key: 'lb' },
    ]);
    expect(res.status).toBe(200);
    expectSchema('ZsetBatchResponse', res.body);
    expect(res.body.atomic).toBe(true);
    expect(res.body.results).toEqual([
      { type: 'add', success: true, key: 'lb', added: 4, updated: 0, cardinality: 4 },
      { type: 'setMember', success: true, member: 'erin', score: 5, added: true },
      { type: 'incr', success: true, member: 'alice', score: 25, ttl: 100 },
      {
        type: 'get',
        success: true,
        members: [
          { member: 'dave', score: '+inf' },
          { member: 'carol', score: 30 },
        ],
        offset: 0,
        more: true,
        ttl: 100,
        etag: expect.any(String),
      },
      {
        type: 'range',
        success: true,
        members: [{ member: 'alice', score: 25 }],
        offset: 1,
        more: false,
        ttl: 100,
      },
      { type: 'score', success: true, member: 'alice', score: 25, rank: 2, rev_rank: 2 },
      { type: 'cardinality', success: true, cardinality: 2 },
      { type: 'removeMember', success: true, member: 'erin', removed: true },
      { type: 'remove', success: true, removed: 1, cardinality: 3 },
      { type: 'pop', success: true, members: [{ member: 'dave', score: '+inf' }] },
      { type: 'exists', success: true, exists: true },
      { type: 'ttl', success: true, ttl: 100 },
      { type: 'persist', success: true, ttl: -1 },
      { type: 'expire', success: true, ttl: 50 },
      { type: 'delete', success: true, deleted: true },
    ]);
  });

  test('when an item fails at run time, then that item alone fails and the others apply', async () => {
    await t.raw.set(raw('b-string'), 'v');
    await t.raw.zadd(raw('b-inf'), '+inf', 'top');
    const res = await batch([
      { type: 'incr', key: 'b-string', member: 'a' },
      { type: 'score', key: 'b-ok', member: 'nobody' },
      { type: 'incr', key: 'b-inf', member: 'top', by: '-inf' },
      { type: 'pop', key: 'b-empty' },
      { type: 'setMember', key: 'b-ok', member: 'a', score: 1 },
    ]);
    expectSchema('ZsetBatchResponse', res.body);
    expect(res.body.results.map((r: { error?: { error: string } }) => r.error?.error ?? 'ok')).toEqual([
      'wrong_type',
      'member_not_found',
      'not_a_number',
      'not_found',
      'ok',
    ]);
    expect(await t.raw.zscore(raw('b-ok'), 'a')).toBe('1');
    expect(await t.raw.zscore(raw('b-inf'), 'top')).toBe('inf');
  });

  test.each([
    ['a score that is a string', { type: 'setMember', key: 'v', member: 'a', score: '1' }, 'invalid_value'],
    ['a bound that is not a score', { type: 'range', key: 'v', min: 'abc' }, 'invalid_request'],
    ['rev as text', { type: 'get', key: 'v', rev: 'true' }, 'invalid_request'],
    ['a limit over 1000', { type: 'get', key: 'v', limit: 1001 }, 'invalid_request'],
    [
      'only existing with replace',
      { type: 'add', key: 'v', members: { a: 1 }, only: 'existing', mode: 'replace' },
      'invalid_request',
    ],
    ['an unknown property', { type: 'pop', key: 'v', wait: 1 }, 'invalid_request'],
  ])('when an item has %s, then 400 names the item and nothing runs', async (_, item, error) => {
    const res = await batch([{ type: 'add', key: 'v-first', members: { a: 1 } }, item]);
    expect([res.status, res.body.error, res.body.details?.index]).toEqual([400, error, 1]);
    expect(res.body.message).toMatch(/^operations\[1\]/);
    expect(await t.raw.exists(raw('v-first'))).toBe(0);
  });

  test('when 1000 incr items hit one member, then the score counts every one', async () => {
    const res = await batch(
      Array.from({ length: 1000 }, () => ({ type: 'incr', key: 'b-many', member: 'n' })),
    );
    expect(res.body.results.at(-1)).toEqual({
      type: 'incr',
      success: true,
      member: 'n',
      score: 1000,
      ttl: -1,
    });
  });
});
