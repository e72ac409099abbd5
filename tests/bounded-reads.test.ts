// Bounded reads: hash and set pages (cursor/limit), whole reads refused above 1,000 elements, the reply budget.
import { createHash } from 'node:crypto';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
// A small budget, so that a test reaches it with little data: 2,000 elements, 100 kB.
let small: TestApp;
beforeAll(async () => {
  t = await testApp('bounded');
  small = await testApp('budget', { SVC_MAX_REPLY_ELEMENTS: '2000', SVC_MAX_REPLY_BYTES: '100000' });
});
afterAll(() => Promise.all([t.close(), small.close()]));

const raw = (app: TestApp, key: string) => `${app.prefix}${key}`;
const range = (n: number, name: string) => Array.from({ length: n }, (_, i) => `${name}-${i}`);

async function hash(app: TestApp, key: string, n: number): Promise<void> {
  const fields = range(n, 'f').flatMap((f) => [f, `value of ${f}`]);
  for (let i = 0; i < fields.length; i += 2000)
    await app.raw.hset(raw(app, key), ...fields.slice(i, i + 2000));
}
async function set(app: TestApp, key: string, n: number, name = 'm'): Promise<void> {
  const members = range(n, name);
  for (let i = 0; i < members.length; i += 1000)
    await app.raw.sadd(raw(app, key), ...members.slice(i, i + 1000));
}

/** Walks every page of `url` (at most `max` pages), answering each page's body. */
async function walk(url: string, limit?: number, max = 200): Promise<Record<string, unknown>[]> {
  const pages: Record<string, unknown>[] = [];
  let cursor = '';
  for (let i = 0; i < max; i++) {
    const query: Record<string, string | number> = { cursor };
    if (limit !== undefined) query.limit = limit;
    const res = await request(t.data).get(url).query(query);
    expect(res.status).toBe(200);
    pages.push(res.body);
    if (res.body.complete) return pages;
    cursor = res.body.cursor;
  }
  throw new Error(`${url}: not complete after ${max} pages`);
}

describe('a whole read of a large hash or set is refused, naming the paging parameters', () => {
  beforeAll(async () => {
    await hash(t, 'big-hash', 2500);
    await set(t, 'big-set', 2500);
  });

  test.each([
    '/store/hash/big-hash',
    '/store/hash/big-hash/keys',
    '/store/hash/big-hash/values',
    '/store/set/big-set',
  ])(
    'when GET %s has no cursor or limit and the key holds 2,500 elements, then 413 reply_too_large',
    async (url) => {
      const res = await request(t.data).get(url);
      expect(res.status).toBe(413);
      expect(res.body.error).toBe('reply_too_large');
      expect(res.body.message).toContain("'cursor'");
      expect(res.body.message).toContain("'limit'");
    },
  );

  test('when a batch item reads the large hash whole, then that item fails with reply_too_large', async () => {
    const res = await request(t.data)
      .post('/store/hash/batch')
      .send({
        operations: [
          { type: 'get', key: 'big-hash' },
          { type: 'exists', key: 'big-hash' },
        ],
      });
    expect(res.status).toBe(200);
    expect(res.body.results[0]).toMatchObject({
      success: false,
      error: { error: 'reply_too_large', status: 413 },
    });
    expect(res.body.results[1]).toMatchObject({ success: true, exists: true });
  });

  test('when the hash holds 1,000 fields, then the whole read still answers them all', async () => {
    await hash(t, 'thousand', 1000);
    const res = await request(t.data).get('/store/hash/thousand');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.fields)).toHaveLength(1000);
    expect(res.body.cursor).toBeUndefined();
  });
});

describe('pages of a hash or set answer every element exactly once', () => {
  test('when a 2,500-field hash is walked 100 at a time, then every field comes once with its value', async () => {
    await hash(t, 'walk-hash', 2500);
    const pages = await walk('/store/hash/walk-hash', 100);
    const seen = pages.flatMap((p) => Object.entries(p.fields as Record<string, string>));
    for (const page of pages) expect(Object.keys(page.fields as object).length).toBeLessThanOrEqual(100);
    expect(seen.map(([f]) => f).sort()).toEqual(range(2500, 'f').sort());
    for (const [f, v] of seen) expect(v).toBe(`value of ${f}`);
  });

  test('when a 2,500-member set is walked with the default limit, then every member comes once', async () => {
    await set(t, 'walk-set', 2500);
    const pages = await walk('/store/set/walk-set');
    for (const page of pages) {
      expect((page.members as string[]).length).toBeLessThanOrEqual(1000);
      expect(page.cardinality).toBe(2500);
    }
    expect(pages.flatMap((p) => p.members as string[]).sort()).toEqual(range(2500, 'm').sort());
  });

  test('when a small (compact) hash is walked 3 at a time, then pages hold at most 3 and every field comes once', async () => {
    await hash(t, 'small-hash', 10);
    const keys = await walk('/store/hash/small-hash/keys', 3);
    for (const page of keys) expect((page.keys as string[]).length).toBeLessThanOrEqual(3);
    expect(keys.flatMap((p) => p.keys as string[]).sort()).toEqual(range(10, 'f').sort());
    const values = await walk('/store/hash/small-hash/values', 4);
    expect(values.flatMap((p) => p.values as string[]).sort()).toEqual(
      range(10, 'f')
        .map((f) => `value of ${f}`)
        .sort(),
    );
  });

  test('when the cursor is not one the service gave, then 400 invalid_request', async () => {
    await set(t, 'cursor-set', 3);
    for (const cursor of ['nope', Buffer.from('[1,2]').toString('base64url')]) {
      const res = await request(t.data).get('/store/set/cursor-set').query({ cursor });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
    }
  });

  test('when limit is out of range, then 400 invalid_request', async () => {
    const res = await request(t.data).get('/store/set/cursor-set').query({ limit: 1001 });
    expect(res.status).toBe(400);
  });

  test('when a paged key is missing, then 404 not_found', async () => {
    const res = await request(t.data).get('/store/hash/missing').query({ limit: 10 });
    expect(res.status).toBe(404);
  });
});

describe('ETags of pages are answered unasked only for small keys', () => {
  test('when a page of a 2,500-field hash is read, then no ETag unless If-None-Match asks', async () => {
    await hash(t, 'etag-big', 2500);
    const res = await request(t.data).get('/store/hash/etag-big').query({ limit: 10 });
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBeUndefined();
    const asked = await request(t.data)
      .get('/store/hash/etag-big')
      .query({ limit: 10 })
      .set('If-None-Match', '"x"');
    expect(asked.headers.etag).toMatch(/^"[0-9a-f]+"$/);
  });

  test('when a page of a 10-member set is read, then it answers the ETag', async () => {
    await set(t, 'etag-small', 10);
    const res = await request(t.data).get('/store/set/etag-small').query({ limit: 5 });
    expect(res.headers.etag).toMatch(/^"[0-9a-f]+"$/);
  });
});

describe('the reply budget (SVC_MAX_REPLY_ELEMENTS, SVC_MAX_REPLY_BYTES) is checked in Redis before reading', () => {
  test('when a batch reads one 10 kB string 20 times (200 kB), then 413 reply_too_large and nothing ran', async () => {
    await small.raw.set(raw(small, 'ten-k'), 'x'.repeat(10_000));
    const operations = [
      { type: 'set', key: 'written', value: 'v' },
      ...Array.from({ length: 20 }, () => ({ type: 'get', key: 'ten-k' })),
    ];
    const res = await request(small.data).post('/store/string/batch').send({ operations });
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('reply_too_large');
    expect(res.body.message).toContain('SVC_MAX_REPLY_BYTES');
    expect(await small.raw.exists(raw(small, 'written'))).toBe(0);
  });

  test('when GET reads a string above the budget (its value read without a script), then 413 naming its size', async () => {
    await small.raw.set(raw(small, 'big-string'), 'y'.repeat(100_001));
    const res = await request(small.data).get('/store/string/big-string');
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('reply_too_large');
    expect(res.body.details).toEqual({ elements: 1, bytes: 100_001 });
    await small.raw.set(raw(small, 'at-budget'), 'y'.repeat(100_000));
    const at = await request(small.data).get('/store/string/at-budget');
    expect(at.status).toBe(200);
    expect(at.body.value).toHaveLength(100_000);
    expect(at.headers.etag).toBe(`"${createHash('sha1').update('y'.repeat(100_000)).digest('hex')}"`);
  });

  test("when GET reads an empty string, a missing key or another type without a script, then the answers are typed_read's", async () => {
    await small.raw.set(raw(small, 'empty'), '');
    await small.raw.set(raw(small, 'expiring'), 'v', 'EX', 100);
    await small.raw.sadd(raw(small, 'a-set'), 'm');
    const empty = await request(small.data).get('/store/string/empty');
    expect([empty.status, empty.body]).toEqual([200, { value: '', ttl: -1 }]);
    expect(empty.headers.etag).toBe(`"${createHash('sha1').update('').digest('hex')}"`);
    expect((await request(small.data).get('/store/string/expiring')).body).toEqual({ value: 'v', ttl: 100 });
    expect((await request(small.data).get('/store/string/nowhere')).status).toBe(404);
    const wrong = await request(small.data).get('/store/string/a-set');
    expect([wrong.status, wrong.body.error, wrong.body.details]).toEqual([
      409,
      'wrong_type',
      { key: 'a-set', type: 'set' },
    ]);
  });

  test("when a field, a member or a key is read without a script, then the answers and the budget are typed_read's", async () => {
    await small.raw.hset(raw(small, 'fields'), 'big', 'z'.repeat(100_001), 'small', 'v');
    await small.raw.expire(raw(small, 'fields'), 50);
    const big = await request(small.data).get('/store/hash/fields/field/big');
    expect([big.status, big.body.details]).toEqual([413, { elements: 1, bytes: 100_001 }]);
    expect((await request(small.data).get('/store/hash/fields/field/small')).body).toEqual({
      field: 'small',
      value: 'v',
      ttl: -1,
    });
    expect((await request(small.data).get('/store/hash/fields/field/none')).body.error).toBe(
      'field_not_found',
    );
    expect((await request(small.data).get('/store/hash/nowhere/field/small')).body.error).toBe(
      'field_not_found',
    );
    expect((await request(small.data).get('/store/hash/fields/exists')).body).toEqual({ exists: true });
    expect((await request(small.data).get('/store/hash/nowhere/exists')).body).toEqual({ exists: false });
    const wrong = await request(small.data).get('/store/string/fields/exists');
    expect([wrong.status, wrong.body.details]).toEqual([409, { key: 'fields', type: 'hash' }]);
    const card = await request(small.data).get('/store/set/fields/cardinality');
    expect([card.status, card.body.error]).toEqual([409, 'wrong_type']);
    await small.raw.sadd(raw(small, 'members'), 'm');
    expect((await request(small.data).get('/store/set/members/cardinality')).body).toEqual({
      cardinality: 1,
    });
    expect((await request(small.data).get('/store/set/members/member/m/exists')).body).toEqual({
      exists: true,
    });
    expect((await request(small.data).get('/store/set/members/member/n/exists')).body).toEqual({
      exists: false,
    });
  });

  test('when a batch reads it 5 times (50 kB), then every item answers', async () => {
    const operations = Array.from({ length: 5 }, () => ({ type: 'get', key: 'ten-k' }));
    const res = await request(small.data).post('/store/string/batch').send({ operations });
    expect(res.status).toBe(200);
    expect(res.body.results.every((r: { success: boolean }) => r.success)).toBe(true);
  });

  test('when a union would read 3 x 800 members (2,400 elements), then 413 reply_too_large', async () => {
    for (const key of ['u1', 'u2', 'u3']) await set(small, key, 800, key);
    const res = await request(small.data)
      .post('/store/set/union')
      .send({ keys: ['u1', 'u2', 'u3'] });
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('reply_too_large');
    const two = await request(small.data)
      .post('/store/set/union')
      .send({ keys: ['u1', 'u2'] });
    expect(two.status).toBe(200);
    expect(two.body.cardinality).toBe(1600);
  });

  test('when a list page would read 20 items of 10 kB (200 kB), then 413 reply_too_large; 5 items pass', async () => {
    await small.raw.rpush(raw(small, 'heavy-list'), ...Array.from({ length: 20 }, () => 'z'.repeat(10_000)));
    const res = await request(small.data).get('/store/list/heavy-list').query({ start: 0, stop: 19 });
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('reply_too_large');
    const five = await request(small.data).get('/store/list/heavy-list').query({ start: -5, stop: -1 });
    expect(five.status).toBe(200);
    expect(five.body.values).toHaveLength(5);
  });

  test('when a page would go past the byte budget, then it stops early and the walk still ends complete', async () => {
    // 30 values of 10 kB: 300 kB in all, 100 kB per call at most.
    const fields = range(30, 'f').flatMap((f) => [f, 'y'.repeat(10_000)]);
    await small.raw.hset(raw(small, 'heavy'), ...fields);
    let cursor = '';
    const seen: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await request(small.data).get('/store/hash/heavy/keys').query({ cursor, limit: 1000 });
      expect(res.status).toBe(200);
      expect(res.body.keys.length).toBeLessThanOrEqual(10);
      seen.push(...res.body.keys);
      if (res.body.complete) break;
      cursor = res.body.cursor;
    }
    expect(seen.sort()).toEqual(range(30, 'f').sort());
  });
});
