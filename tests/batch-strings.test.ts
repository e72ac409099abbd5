// The string batch: validation first, one transaction, results in request order.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('batch-strings');
});
afterAll(() => t.close());
const batch = (operations: unknown[]) => request(t.data).post('/store/string/batch').send({ operations });
const raw = (key: string) => `${t.prefix}${key}`;

describe('a valid string batch', () => {
  test('when it mixes every type, then each result is in request order with its type', async () => {
    await t.raw.set(raw('b-old'), 'old');
    const res = await batch([
      { type: 'set', key: 'b-new', value: 'v1', ttl: 100 },
      { type: 'get', key: 'b-new' },
      { type: 'get', key: 'b-old' },
      { type: 'exists', key: 'b-missing' },
      { type: 'ttl', key: 'b-old' },
      { type: 'expire', key: 'b-old', ttl: 50 },
      { type: 'persist', key: 'b-new' },
      { type: 'delete', key: 'b-old' },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.atomic).toBe(true);
    expect(res.body.results).toEqual([
      { type: 'set', success: true, key: 'b-new' },
      { type: 'get', success: true, value: 'v1', ttl: 100, etag: expect.any(String) },
      { type: 'get', success: true, value: 'old', ttl: -1, etag: expect.any(String) },
      { type: 'exists', success: true, exists: false },
      { type: 'ttl', success: true, ttl: -1 },
      { type: 'expire', success: true, ttl: 50 },
      { type: 'persist', success: true, ttl: -1 },
      { type: 'delete', success: true, deleted: true },
    ]);
    expect(await t.raw.ttl(raw('b-new'))).toBe(-1);
    expect(await t.raw.exists(raw('b-old'))).toBe(0);
  });

  test('when one item fails at run time, then only that item fails and the others apply', async () => {
    await t.raw.hset(raw('b-hash'), 'f', 'v');
    const res = await batch([
      { type: 'set', key: 'b-before', value: '1' },
      { type: 'get', key: 'b-nope' },
      { type: 'set', key: 'b-hash', value: 'x' },
      { type: 'set', key: 'b-after', value: '2' },
    ]);
    expect(res.status).toBe(200);
    const [before, missing, wrong, after] = res.body.results;
    expect(before).toEqual({ type: 'set', success: true, key: 'b-before' });
    expect(missing).toEqual({
      type: 'get',
      success: false,
      error: { error: 'not_found', message: expect.stringContaining('b-nope'), status: 404 },
    });
    expect(wrong.error).toMatchObject({ error: 'wrong_type', status: 409 });
    expect(after.success).toBe(true);
    expect(await t.raw.hgetall(raw('b-hash'))).toEqual({ f: 'v' });
    expect(await t.raw.get(raw('b-after'))).toBe('2');
  });

  test('when it is only plain sets, then it answers as the general path does for the same items', async () => {
    // Plain sets (type, key and value only) run without an operation per item (routes/batch.ts answerSets); one
    // item of another type sends the same sets down the general path.
    await t.raw.hset(raw('b-plain-hash'), 'f', 'v');
    const sets = (tag: string) => [
      { type: 'set', key: `b-plain-${tag}`, value: 'é ✓' },
      { type: 'set', key: 'b-plain-hash', value: 'x' },
      { type: 'set', key: `b-plain-${tag}`, value: '' },
    ];
    const plain = await batch(sets('a'));
    const general = await batch([...sets('b'), { type: 'exists', key: 'b-plain-b' }]);
    expect(plain.status).toBe(200);
    expect(general.status).toBe(200);
    const named = (results: { key?: string }[]) =>
      results.map((r) => (r.key ? { ...r, key: r.key.replace(/-[ab]$/, '') } : r));
    expect(named(plain.body.results)).toEqual(named(general.body.results.slice(0, 3)));
    expect(plain.body.results[1]).toEqual({
      type: 'set',
      success: false,
      error: {
        error: 'wrong_type',
        message: "Key 'b-plain-hash' holds a hash, not a string",
        status: 409,
      },
    });
    expect(plain.body.atomic).toBe(true);
    expect(await t.raw.get(raw('b-plain-a'))).toBe('');
    expect(await t.raw.hgetall(raw('b-plain-hash'))).toEqual({ f: 'v' });
  });

  test('when values hold any text, then a batch stores the same bytes as the single endpoint', async () => {
    const values = [
      'é ✓ 😀',
      'quote " backslash \\ slash /',
      'nul \u0000 tab \t newline \n',
      'lone \ud800 surrogate',
      // The text of an escape, not a surrogate: the JSON argument's check for lone surrogates must tell them apart.
      'backslash-u text \\ud800 \\\ud800',
      '',
    ];
    const res = await batch(values.map((value, i) => ({ type: 'set', key: `b-text-${i}`, value })));
    expect(res.status).toBe(200);
    for (const [i, value] of values.entries()) {
      await request(t.data).post(`/store/string/b-single-${i}`).send({ value }).expect(201);
      const [batched, single] = await Promise.all([
        t.raw.getBuffer(raw(`b-text-${i}`)),
        t.raw.getBuffer(raw(`b-single-${i}`)),
      ]);
      expect(batched).toEqual(single);
      expect(batched).toEqual(Buffer.from(value.toWellFormed()));
    }
  });

  test('when it has 1000 items, then all are applied', async () => {
    const ops = Array.from({ length: 1000 }, (_, i) => ({
      type: 'set',
      key: `b-many:${i}`,
      value: String(i),
    }));
    const res = await batch(ops);
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(1000);
    expect(await t.raw.get(raw('b-many:999'))).toBe('999');
  });

  test('a concurrent reader never sees half of a batch', async () => {
    const keys = Array.from({ length: 50 }, (_, i) => `b-atomic:${i}`);
    const work: Promise<unknown>[] = [];
    const reads: Promise<number>[] = [];
    for (let round = 0; round < 20; round++) {
      work.push(batch(keys.map((key) => ({ type: 'set', key, value: String(round) }))));
      reads.push(t.raw.mget(...keys.map(raw)).then((values) => new Set(values).size));
    }
    await Promise.all(work);
    for (const distinct of await Promise.all(reads)) expect(distinct).toBe(1);
  });

  test('when SVC_BATCH_MAX_OPERATIONS is lower, then a longer batch is 400', async () => {
    const small = await testApp('batch-small', { SVC_BATCH_MAX_OPERATIONS: '2' });
    try {
      const ops = Array.from({ length: 3 }, () => ({ type: 'get', key: 'k' }));
      const res = await request(small.data).post('/store/string/batch').send({ operations: ops });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/2/);
    } finally {
      await small.close();
    }
  });
});

describe('an invalid string batch executes nothing', () => {
  test.each([
    { what: 'an unknown type', bad: { type: 'frobnicate', key: 'k' }, error: 'invalid_request' },
    { what: 'a missing key', bad: { type: 'get' }, error: 'invalid_key' },
    { what: 'a bad key', bad: { type: 'get', key: 'a b' }, error: 'invalid_key' },
    { what: 'a non-string value', bad: { type: 'set', key: 'k', value: 1 }, error: 'invalid_value' },
    { what: 'a bad ttl', bad: { type: 'set', key: 'k', value: 'v', ttl: 0 }, error: 'invalid_ttl' },
    { what: 'an extra field', bad: { type: 'get', key: 'k', value: 'v' }, error: 'invalid_request' },
  ])(
    'when item 1 has $what, then 400 $error with index 1 and item 0 is not applied',
    async ({ bad, error }) => {
      const res = await batch([{ type: 'set', key: 'b-untouched', value: 'x' }, bad]);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(error);
      expect(res.body.details.index).toBe(1);
      expect(res.body.message).toContain('operations[1]');
      expect(await t.raw.exists(raw('b-untouched'))).toBe(0);
    },
  );

  test('when an item’s value is over SVC_MAX_VALUE_BYTES, then 413 naming its index and nothing runs', async () => {
    const small = await testApp('batch-value', { SVC_MAX_VALUE_BYTES: '4' });
    try {
      const res = await request(small.data)
        .post('/store/string/batch')
        .send({
          operations: [
            { type: 'set', key: 'ok', value: 'tiny' },
            { type: 'set', key: 'big', value: 'too large' },
          ],
        });
      expect(res.status).toBe(413);
      expect(res.body.details.index).toBe(1);
      expect(res.body.message).toContain('operations[1]');
      expect(await small.raw.exists(`${small.prefix}ok`)).toBe(0);
    } finally {
      await small.close();
    }
  });

  test('when operations is empty, then 400', async () => {
    expect((await batch([])).status).toBe(400);
  });

  test('when operations is missing, then 400', async () => {
    const res = await request(t.data).post('/store/string/batch').send({});
    expect(res.status).toBe(400);
  });

  test('when there are more than 1000 items, then 400', async () => {
    const ops = Array.from({ length: 1001 }, () => ({ type: 'get', key: 'k' }));
    expect((await batch(ops)).status).toBe(400);
  });
});
