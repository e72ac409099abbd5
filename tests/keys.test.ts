// Key discovery: GET /store/keys walks the keyspace page by page (SCAN); GET and DELETE /store/keys/{key}.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { apiKey, bearer } from './support/auth';

interface Listed {
  key: string;
  type: string;
  ttl: number;
}

let t: TestApp;
beforeAll(async () => {
  t = await testApp('keys');
});
afterAll(() => t.close());
const raw = (key: string) => `${t.prefix}${key}`;

/** Walks every page of a listing; returns the keys seen (with repeats) and the number of pages. */
async function walk(app: TestApp['data'], query: Record<string, string | number>, auth?: string) {
  const seen: Listed[] = [];
  let cursor = '';
  for (let pages = 1; ; pages++) {
    const req = request(app)
      .get('/store/keys')
      .query({ ...query, ...(cursor ? { cursor } : {}) });
    const res = await (auth ? req.set('Authorization', auth) : req);
    expect(res.status).toBe(200);
    seen.push(...res.body.keys);
    if (res.body.complete) {
      expect(res.body.cursor).toBe('');
      return { seen, pages };
    }
    cursor = res.body.cursor;
  }
}

describe('a walk page by page', () => {
  test('when 10,000 keys exist, then every one is returned, none missed', async () => {
    const pipeline = t.raw.pipeline();
    for (let i = 0; i < 10_000; i++) pipeline.set(raw(`big:${i}`), 'v');
    await pipeline.exec();
    const { seen, pages } = await walk(t.data, { prefix: 'big:', limit: 1000 });
    const names = new Set(seen.map((k) => k.key));
    expect(names.size).toBe(10_000);
    for (let i = 0; i < 10_000; i += 997) expect(names.has(`big:${i}`)).toBe(true);
    expect(pages).toBeGreaterThanOrEqual(10);
    expect(seen[0]).toEqual({ key: expect.stringMatching(/^big:\d+$/), type: 'string', ttl: -1 });
  }, 30_000);

  test('when a type is asked for, then only keys of that type, each with its ttl', async () => {
    await t.raw.hset(raw('typed:h'), 'f', 'v');
    await t.raw.expire(raw('typed:h'), 100);
    await t.raw.sadd(raw('typed:s'), 'm');
    await t.raw.set(raw('typed:v'), 'v');
    const { seen } = await walk(t.data, { prefix: 'typed:', type: 'hash' });
    expect(seen).toEqual([{ key: 'typed:h', type: 'hash', ttl: expect.any(Number) }]);
    expect(seen[0]?.ttl).toBeGreaterThan(90);
  });

  test('when the prefix holds glob characters, then they match themselves only', async () => {
    await Promise.all(['g:a*b:1', 'g:a*b:2', 'g:axb:1', 'g:a[b]:1'].map((k) => t.raw.set(raw(k), 'v')));
    const star = await walk(t.data, { prefix: 'g:a*b' });
    expect(star.seen.map((k) => k.key).sort()).toEqual(['g:a*b:1', 'g:a*b:2']);
    const brackets = await walk(t.data, { prefix: 'g:a[b]' });
    expect(brackets.seen.map((k) => k.key)).toEqual(['g:a[b]:1']);
  });

  test('when a page is sparse, then it answers with complete: false and a cursor after at most 10 SCAN calls', async () => {
    const res = await request(t.data).get('/store/keys').query({ prefix: 'nothing-here:', limit: 1 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ keys: [], cursor: expect.any(String), complete: false });
  });
});

describe('the query', () => {
  test.each(['0', '1001', '1.5', 'ten'])('when limit is %s, then 400 invalid_request', async (limit) => {
    const res = await request(t.data).get('/store/keys').query({ limit });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  test.each(['not-a-cursor', cursorOf([1, 2]), cursorOf([0, '1e5']), cursorOf([0, '18446744073709551616'])])(
    'when the cursor is %s, then 400 invalid_request naming the cursor',
    async (cursor) => {
      const res = await request(t.data).get('/store/keys').query({ cursor });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        error: 'invalid_request',
        message: expect.stringContaining('cursor'),
      });
    },
  );
});

describe('metrics', () => {
  test('when keys are listed, then requests count under the route template, never a raw key', async () => {
    await request(t.data).get('/store/keys').query({ limit: 1 });
    await request(t.data).get('/api/keys/one:any');
    const text = (await request(t.data).get('/store/admin/metrics')).text;
    expect(text).toContain('svc_requests_total{method="GET",endpoint="/store/keys"}');
    expect(text).toContain('svc_requests_total{method="GET",endpoint="/store/keys/{key}"}');
    expect(text).not.toContain('one:any');
  });
});

describe('internal keys', () => {
  test('when the service has #svc: keys, then no listing ever shows them', async () => {
    const bare = await testApp('keys-bare', { SVC_KEY_PREFIX: '' });
    const internal = `#svc:keys-test:${Date.now()}`;
    try {
      await bare.raw.set(internal, 'v');
      const { seen } = await walk(bare.data, { prefix: '#svc:', limit: 1000 });
      expect(seen).toEqual([]);
    } finally {
      await bare.raw.del(internal);
      await bare.close();
    }
  });
});

describe('a tenant', () => {
  const tenant = apiKey('tenant', ['read', 'write'], 'tenant-a:');
  let tt: TestApp;
  beforeAll(async () => {
    tt = await testApp('keys-tenant', { SVC_API_KEYS: JSON.stringify({ keys: [tenant] }) });
    await Promise.all(['tenant-a:1', 'tenant-a:2', 'tenant-b:1'].map((k) => tt.raw.set(tt.prefix + k, 'v')));
  });
  afterAll(() => tt.close());

  test.each(['', 'ten', 'tenant-a:'])(
    'when it lists with prefix "%s", then it sees only its keys',
    async (prefix) => {
      const { seen } = await walk(tt.data, { prefix }, bearer(tenant));
      expect(seen.map((k) => k.key).sort()).toEqual(['tenant-a:1', 'tenant-a:2']);
    },
  );

  test('when it asks for another prefix, then 403 forbidden', async () => {
    const res = await request(tt.data)
      .get('/store/keys')
      .query({ prefix: 'tenant-b:' })
      .set('Authorization', bearer(tenant));
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
  });

  test('when it asks about or deletes a foreign key, then 403 and nothing is deleted', async () => {
    const auth = bearer(tenant);
    expect((await request(tt.data).get('/store/keys/tenant-b:1').set('Authorization', auth)).status).toBe(
      403,
    );
    expect((await request(tt.data).delete('/store/keys/tenant-b:1').set('Authorization', auth)).status).toBe(
      403,
    );
    expect(await tt.raw.exists(`${tt.prefix}tenant-b:1`)).toBe(1);
  });
});

describe('one key', () => {
  test.each([
    ['string', () => t.raw.set(raw('one:v'), 'hello'), 'one:v', 5],
    ['hash', () => t.raw.hset(raw('one:h'), 'a', '1', 'b', '2'), 'one:h', 2],
    ['set', () => t.raw.sadd(raw('one:s'), 'x', 'y', 'z'), 'one:s', 3],
    ['list', () => t.raw.rpush(raw('one:l'), 'x'), 'one:l', 1],
    ['zset', () => t.raw.zadd(raw('one:z'), 1, 'x', 2, 'y'), 'one:z', 2],
    ['stream', () => t.raw.xadd(raw('one:x'), '*', 'f', 'v'), 'one:x', null],
  ])('when it holds a %s, then its type, ttl and size', async (type, create, key, size) => {
    await create();
    const res = await request(t.data).get(`/store/keys/${key}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ key, type, ttl: -1, size });
  });

  test('when it is missing, then 404 not_found', async () => {
    const res = await request(t.data).get('/store/keys/one:missing');
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
  });

  test('when it is deleted, then whatever its type it is gone, and a second delete says deleted: false', async () => {
    await t.raw.rpush(raw('del:l'), 'x');
    expect((await request(t.data).delete('/store/keys/del:l')).body).toEqual({
      success: true,
      deleted: true,
    });
    expect(await t.raw.exists(raw('del:l'))).toBe(0);
    expect((await request(t.data).delete('/store/keys/del:l')).body).toEqual({
      success: true,
      deleted: false,
    });
  });
});
