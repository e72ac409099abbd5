// Lists end to end: push, pop, pages, length, index, trim, remove, TTL rules, create-only, limits, batch items.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { expectSchema } from './support/schemas';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('lists', { SVC_MAX_VALUE_BYTES: '64' });
});
afterAll(() => t.close());

const api = () => request(t.data);
const raw = (key: string) => `${t.prefix}${key}`;
const push = (key: string, body: object) => api().post(`/store/list/${key}/push`).send(body);
const pop = (key: string, body?: object) => {
  const req = api().post(`/store/list/${key}/pop`).set('Content-Type', 'application/json');
  return body === undefined ? req : req.send(body);
};
const items = (key: string) => t.raw.lrange(raw(key), 0, -1);

describe('push', () => {
  test('when the key is missing, then 201 creates it; a second push answers 200 with the new length', async () => {
    const first = await push('l-new', { values: ['a', 'b'] });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ success: true, key: 'l-new', length: 2 });
    expectSchema('ListPushResponse', first.body);
    const second = await push('l-new', { values: ['c'] });
    expect(second.status).toBe(200);
    expect(second.body.length).toBe(3);
    expect(await items('l-new')).toEqual(['a', 'b', 'c']);
  });

  test('when end is left, then the values go in one by one at the head (the last sent ends up first)', async () => {
    await push('l-left', { values: ['x'] });
    await push('l-left', { values: ['a', 'b'], end: 'left' });
    expect(await items('l-left')).toEqual(['b', 'a', 'x']);
  });

  test('when ttl is given, then the list expires; a later push without ttl keeps that expiry', async () => {
    await push('l-ttl', { values: ['a'], ttl: 500 });
    expect(await t.raw.ttl(raw('l-ttl'))).toBeGreaterThan(400);
    await push('l-ttl', { values: ['b'] });
    expect(await t.raw.ttl(raw('l-ttl'))).toBeGreaterThan(400);
    await push('l-ttl', { values: ['c'], ttl: 60 });
    expect(await t.raw.ttl(raw('l-ttl'))).toBeLessThanOrEqual(60);
  });

  test('when If-None-Match: * and the key exists, then 409 key_exists and nothing is pushed', async () => {
    const created = await push('l-once', { values: ['a'] }).set('If-None-Match', '*');
    expect(created.status).toBe(201);
    const again = await push('l-once', { values: ['b'] }).set('If-None-Match', '*');
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('key_exists');
    expect(await items('l-once')).toEqual(['a']);
  });

  test.each([
    ['values missing', {}, 400, 'invalid_value'],
    ['values empty', { values: [] }, 400, 'invalid_value'],
    ['a value not a string', { values: ['a', 1] }, 400, 'invalid_value'],
    ['too many values', { values: Array.from({ length: 10_001 }, () => 'v') }, 400, 'invalid_value'],
    ['end unknown', { values: ['a'], end: 'middle' }, 400, 'invalid_request'],
    ['ttl 0', { values: ['a'], ttl: 0 }, 400, 'invalid_ttl'],
    ['a value above the byte limit', { values: ['a', 'x'.repeat(65)] }, 413, 'payload_too_large'],
  ])('when %s, then %i %s and nothing changes', async (_what, body, status, error) => {
    await t.raw.rpush(raw('l-bad'), 'keep');
    const res = await push('l-bad', body);
    expect([res.status, res.body.error]).toEqual([status, error]);
    expect(await items('l-bad')).toEqual(['keep']);
    await t.raw.del(raw('l-bad'));
  });

  test('when the key holds a hash, then 409 wrong_type naming its type, and the hash is untouched', async () => {
    await t.raw.hset(raw('l-hash'), 'f', 'v');
    const res = await push('l-hash', { values: ['a'] });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('wrong_type');
    expect(res.body.message).toContain('hash');
    expect(await t.raw.hgetall(raw('l-hash'))).toEqual({ f: 'v' });
  });

  test('when more than 1000 values are pushed (sent in chunks), then the length is the real one', async () => {
    const values = Array.from({ length: 2500 }, (_, i) => `v${i}`);
    const res = await push('l-long', { values });
    expect(res.body.length).toBe(2500);
    expect(await t.raw.lindex(raw('l-long'), -1)).toBe('v2499');
  });
});

describe('pop', () => {
  test('when no body, then the head item; end right takes the tail; count takes several', async () => {
    await t.raw.rpush(raw('l-pop'), 'a', 'b', 'c', 'd', 'e');
    const head = await pop('l-pop');
    expect(head.status).toBe(200);
    expect(head.body).toEqual({ success: true, values: ['a'] });
    expectSchema('ListPopResponse', head.body);
    expect((await pop('l-pop', { end: 'right' })).body.values).toEqual(['e']);
    expect((await pop('l-pop', { count: 10 })).body.values).toEqual(['b', 'c', 'd']);
    expect(await t.raw.exists(raw('l-pop'))).toBe(0);
  });

  test('when the list is missing (empty), then 404 not_found, as for a set pop', async () => {
    const res = await pop('l-none', {});
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
  });

  test('when the key holds a string, then 409 wrong_type, also with wait, and nothing changes', async () => {
    await t.raw.set(raw('l-string'), 'v');
    expect((await pop('l-string')).body.error).toBe('wrong_type');
    expect((await pop('l-string', { wait: 1 })).body.error).toBe('wrong_type');
    expect(await t.raw.get(raw('l-string'))).toBe('v');
  });

  test.each([
    ['count 0', { count: 0 }],
    ['count 1001', { count: 1001 }],
    ['wait above the maximum', { wait: 31 }],
    ['wait negative', { wait: -1 }],
    ['end unknown', { end: 'up' }],
    ['an unknown property', { timeout: 1 }],
  ])('when %s, then 400 invalid_request and nothing is popped', async (_what, body) => {
    await t.raw.rpush(raw('l-pop-bad'), 'keep');
    const res = await pop('l-pop-bad', body);
    expect([res.status, res.body.error]).toEqual([400, 'invalid_request']);
    expect(await items('l-pop-bad')).toEqual(['keep']);
    await t.raw.del(raw('l-pop-bad'));
  });

  test('when an item is there, then a pop with wait answers at once like one without', async () => {
    await t.raw.rpush(raw('l-ready'), 'a');
    expect((await pop('l-ready', { wait: 5 })).body.values).toEqual(['a']);
  });

  test('when the list stays empty for the wait, then 404 not_found', async () => {
    const res = await pop('l-empty', { wait: 0.2 });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
  });
});

describe('pages', () => {
  beforeAll(async () => {
    await t.raw.rpush(raw('l-page'), ...Array.from({ length: 250 }, (_, i) => `v${i}`));
  });
  const page = (query: string) => api().get(`/store/list/l-page${query}`);

  test('when no range is given, then the first 100 items, the whole length and the ttl', async () => {
    const res = await page('');
    expect(res.status).toBe(200);
    expectSchema('ListRangeResponse', res.body);
    expect(res.body).toMatchObject({ length: 250, start: 0, stop: 99, ttl: -1 });
    expect(res.body.values).toHaveLength(100);
    expect(res.body.values[99]).toBe('v99');
  });

  test('when start and stop are given, then that range (both included), negatives from the tail', async () => {
    expect((await page('?start=10&stop=12')).body.values).toEqual(['v10', 'v11', 'v12']);
    expect((await page('?start=-2&stop=-1')).body.values).toEqual(['v248', 'v249']);
    expect((await page('?start=-3')).body).toMatchObject({ values: ['v247', 'v248', 'v249'], stop: -1 });
    expect((await page('?start=240&stop=999')).body.values).toHaveLength(10);
    expect((await page('?start=300')).body.values).toEqual([]);
  });

  test.each([
    ['the bounds count from different ends', '?start=0&stop=-1'],
    ['more than 1000 items', '?start=0&stop=1000'],
    ['start is not a number', '?start=abc'],
  ])('when %s, then 400 invalid_request', async (_what, query) => {
    const res = await page(query);
    expect([res.status, res.body.error]).toEqual([400, 'invalid_request']);
  });

  test('when exactly 1000 items are asked for, then they are answered', async () => {
    expect((await page('?start=0&stop=999')).status).toBe(200);
  });

  test('when the list is missing, then 404; another type, 409', async () => {
    expect((await api().get('/store/list/l-nope')).status).toBe(404);
    await t.raw.sadd(raw('l-set'), 'm');
    expect((await api().get('/store/list/l-set')).body.error).toBe('wrong_type');
  });
});

describe('length, index, trim, remove', () => {
  test('when the length is asked, then LLEN; a missing list is 404', async () => {
    await t.raw.rpush(raw('l-len'), 'a', 'b');
    const res = await api().get('/store/list/l-len/length');
    expect(res.body).toEqual({ length: 2 });
    expectSchema('ListLengthResponse', res.body);
    expect((await api().get('/store/list/l-len-none/length')).status).toBe(404);
  });

  test('when an index is read, then its item; beyond the end 404 index_not_found; a bad index 400', async () => {
    await t.raw.rpush(raw('l-idx'), 'a', 'b', 'c');
    expect((await api().get('/store/list/l-idx/index/1')).body).toEqual({ index: 1, value: 'b' });
    expect((await api().get('/store/list/l-idx/index/-1')).body.value).toBe('c');
    const beyond = await api().get('/store/list/l-idx/index/3');
    expect([beyond.status, beyond.body.error]).toEqual([404, 'index_not_found']);
    expect((await api().get('/store/list/l-idx-none/index/0')).body.error).toBe('not_found');
    expect((await api().get('/store/list/l-idx/index/1.5')).body.error).toBe('invalid_request');
  });

  test('when an index is written, then LSET; beyond the end 404 index_not_found and nothing changes', async () => {
    await t.raw.rpush(raw('l-set-idx'), 'a', 'b');
    await t.raw.expire(raw('l-set-idx'), 500);
    const res = await api().post('/store/list/l-set-idx/index/-1').send({ value: 'B' });
    expect(res.body).toEqual({ success: true, index: -1, value: 'B' });
    expectSchema('ListSetIndexResponse', res.body);
    expect(await items('l-set-idx')).toEqual(['a', 'B']);
    expect(await t.raw.ttl(raw('l-set-idx'))).toBeGreaterThan(400);
    const beyond = await api().post('/store/list/l-set-idx/index/2').send({ value: 'C' });
    expect([beyond.status, beyond.body.error]).toEqual([404, 'index_not_found']);
    expect(await items('l-set-idx')).toEqual(['a', 'B']);
    const missing = await api().post('/store/list/l-set-none/index/0').send({ value: 'C' });
    expect(missing.body.error).toBe('not_found');
    expect(await t.raw.exists(raw('l-set-none'))).toBe(0);
    const big = await api()
      .post('/store/list/l-set-idx/index/0')
      .send({ value: 'x'.repeat(65) });
    expect(big.status).toBe(413);
  });

  test('when a list is trimmed, then only the range stays; an empty range removes the key', async () => {
    await t.raw.rpush(raw('l-trim'), 'a', 'b', 'c', 'd');
    const res = await api().post('/store/list/l-trim/trim').send({ start: 1, stop: -2 });
    expect(res.body).toEqual({ success: true, length: 2 });
    expect(await items('l-trim')).toEqual(['b', 'c']);
    expect((await api().post('/store/list/l-trim/trim').send({ start: 5, stop: 9 })).body.length).toBe(0);
    expect(await t.raw.exists(raw('l-trim'))).toBe(0);
    expect((await api().post('/store/list/l-trim/trim').send({ start: 0, stop: 1 })).status).toBe(404);
    expect((await api().post('/store/list/l-trim/trim').send({ start: 0 })).status).toBe(400);
  });

  test('when a value is removed, then every occurrence or count of them from either end', async () => {
    await t.raw.rpush(raw('l-rem'), 'x', 'a', 'x', 'b', 'x');
    const first = await api().post('/store/list/l-rem/remove').send({ value: 'x', count: 1 });
    expect(first.body).toEqual({ success: true, removed: 1, length: 4 });
    expectSchema('ListRemoveResponse', first.body);
    await api().post('/store/list/l-rem/remove').send({ value: 'x', count: -1 });
    expect(await items('l-rem')).toEqual(['a', 'x', 'b']);
    expect((await api().post('/store/list/l-rem/remove').send({ value: 'x' })).body.removed).toBe(1);
    const none = await api().post('/store/list/l-rem-none/remove').send({ value: 'x' });
    expect(none.body).toEqual({ success: true, removed: 0, length: 0 });
  });
});

describe('whole-key routes', () => {
  test('when exists, ttl, expire, persist and delete are used, then they work as for the other families', async () => {
    expect((await api().get('/store/list/l-key/exists')).body).toEqual({ exists: false });
    await push('l-key', { values: ['a'] });
    expect((await api().get('/store/list/l-key/exists')).body).toEqual({ exists: true });
    expect((await api().get('/store/list/l-key/ttl')).body).toEqual({ ttl: -1 });
    expect((await api().post('/store/list/l-key/expire').send({ ttl: 100 })).body.ttl).toBe(100);
    expect((await api().get('/store/list/l-key')).body.ttl).toBe(100);
    expect((await api().delete('/store/list/l-key/ttl')).body).toEqual({ success: true, ttl: -1 });
    expect((await api().delete('/store/list/l-key')).body).toEqual({ success: true, deleted: true });
    expect((await api().delete('/store/list/l-key')).body).toEqual({ success: true, deleted: false });
    expect((await api().get('/store/list/l-key/ttl')).status).toBe(404);
  });

  test('when key info is asked for a list, then its type and size (LLEN) come from the family', async () => {
    await t.raw.rpush(raw('l-info'), 'a', 'b', 'c');
    const res = await api().get('/store/keys/l-info');
    expect(res.body).toEqual({ key: 'l-info', type: 'list', ttl: -1, size: 3 });
  });
});

describe('the list batch', () => {
  const batch = (operations: unknown[]) => api().post('/store/list/batch').send({ operations });

  test('when every item type runs, then each answers like its endpoint, atomically', async () => {
    const res = await batch([
      { type: 'push', key: 'b-l', values: ['a', 'b', 'c', 'd'], ttl: 300 },
      { type: 'pop', key: 'b-l', end: 'right' },
      { type: 'range', key: 'b-l', start: 0, stop: 9 },
      { type: 'length', key: 'b-l' },
      { type: 'index', key: 'b-l', index: 0 },
      { type: 'setIndex', key: 'b-l', index: 0, value: 'A' },
      { type: 'remove', key: 'b-l', value: 'b' },
      { type: 'trim', key: 'b-l', start: 0, stop: 0 },
      { type: 'exists', key: 'b-l' },
      { type: 'ttl', key: 'b-l' },
      { type: 'persist', key: 'b-l' },
      { type: 'expire', key: 'b-l', ttl: 50 },
      { type: 'index', key: 'b-l', index: 5 },
      { type: 'pop', key: 'b-none' },
      { type: 'delete', key: 'b-l' },
    ]);
    expect(res.status).toBe(200);
    expectSchema('ListBatchResponse', res.body);
    const r = res.body.results;
    expect(res.body.atomic).toBe(true);
    expect(r[0]).toEqual({ type: 'push', success: true, key: 'b-l', length: 4 });
    expect(r[1]).toEqual({ type: 'pop', success: true, values: ['d'] });
    expect(r[2]).toMatchObject({
      type: 'range',
      success: true,
      values: ['a', 'b', 'c'],
      length: 3,
      ttl: 300,
    });
    expect(r[3]).toEqual({ type: 'length', success: true, length: 3 });
    expect(r[4]).toEqual({ type: 'index', success: true, index: 0, value: 'a' });
    expect(r[5]).toEqual({ type: 'setIndex', success: true, index: 0, value: 'A' });
    expect(r[6]).toEqual({ type: 'remove', success: true, removed: 1, length: 2 });
    expect(r[7]).toEqual({ type: 'trim', success: true, length: 1 });
    expect(r[8]).toEqual({ type: 'exists', success: true, exists: true });
    expect(r[9]).toEqual({ type: 'ttl', success: true, ttl: 300 });
    expect(r[10]).toEqual({ type: 'persist', success: true, ttl: -1 });
    expect(r[11]).toEqual({ type: 'expire', success: true, ttl: 50 });
    expect(r[12].error).toMatchObject({ error: 'index_not_found', status: 404 });
    expect(r[13].error).toMatchObject({ error: 'not_found', status: 404 });
    expect(r[14]).toEqual({ type: 'delete', success: true, deleted: true });
  });

  test.each([
    ['a pop item with wait', { type: 'pop', key: 'b-bad', wait: 1 }],
    ['a range item of more than 1000 items', { type: 'range', key: 'b-bad', start: 0, stop: -1 }],
    ['a push item without values', { type: 'push', key: 'b-bad' }],
    [
      'a push item with a value above the byte limit',
      { type: 'push', key: 'b-bad', values: ['x'.repeat(65)] },
    ],
  ])('when %s, then the whole batch is refused with its index and nothing runs', async (_what, item) => {
    const res = await batch([{ type: 'push', key: 'b-bad', values: ['a'] }, item]);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.body.details.index).toBe(1);
    expect(await t.raw.exists(raw('b-bad'))).toBe(0);
  });

  test('when an item meets a hash, then that item fails with wrong_type and the others apply', async () => {
    await t.raw.hset(raw('b-hash'), 'f', 'v');
    const res = await batch([
      { type: 'push', key: 'b-hash', values: ['a'] },
      { type: 'push', key: 'b-ok', values: ['a'] },
    ]);
    expect(res.body.results[0].error.error).toBe('wrong_type');
    expect(res.body.results[1].success).toBe(true);
    expect(await t.raw.hgetall(raw('b-hash'))).toEqual({ f: 'v' });
  });
});

test('when a page starts at 2^53 - 1, then its default stop is 2^53 - 1 exactly (no rounding)', async () => {
  await request(t.data)
    .post('/store/list/far/push')
    .send({ values: ['a'] });
  const res = await request(t.data).get('/store/list/far').query({ start: '9007199254740991' });
  expect([res.status, res.body.start, res.body.stop, res.body.values]).toEqual([
    200,
    9007199254740991,
    9007199254740991,
    [],
  ]);
});
