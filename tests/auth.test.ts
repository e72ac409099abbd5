// Authentication and permissions: API keys, Basic users, 401/403 causes, x-permission of every operation, batches.
import type { Response } from 'express';
import request from 'supertest';
import type { Permission } from '../src/http/contract';
import { type TestApp, testApp } from './support/app';
import { apiKey, basicAuth, bearer, keyNew, sampleRequest } from './support/auth';

const keys = {
  reader: apiKey('reader', ['read']),
  writer: apiKey('writer', ['write']),
  admin: apiKey('admin', ['admin']),
  noRead: apiKey('no-read', ['write', 'admin']),
  noWrite: apiKey('no-write', ['read', 'admin']),
  noAdmin: apiKey('no-admin', ['read', 'write']),
  nothing: apiKey('nothing', []),
};
const only: Record<Permission, typeof keys.reader> = {
  read: keys.reader,
  write: keys.writer,
  admin: keys.admin,
};
const without: Record<Permission, typeof keys.reader> = {
  read: keys.noRead,
  write: keys.noWrite,
  admin: keys.noAdmin,
};

let t: TestApp;
let alicePassword: string;
beforeAll(async () => {
  const alice = keyNew(['--basic', '--username', 'alice', '--permissions', 'read']);
  alicePassword = alice.secret as string;
  t = await testApp('auth', {
    SVC_API_KEYS: JSON.stringify({ keys: Object.values(keys), users: [alice.entry] }),
  });
});
afterAll(() => t.close());
const get = (url: string, authorization?: string) => {
  const req = request(t.data).get(url);
  return authorization === undefined ? req : req.set('Authorization', authorization);
};

describe('missing or bad credentials are 401 unauthorized, naming the cause', () => {
  test.each([
    [
      'no Authorization header',
      undefined,
      /^Missing credentials: send Authorization: Bearer <API key> or Basic/,
    ],
    ['an unknown API key', 'Bearer not-a-known-key-0123456789', /^Invalid API key$/],
    ['a JWT while no JWT key is configured', 'Bearer aaa.bbb.ccc', /JWTs are not accepted/],
    ['an empty Bearer token', 'Bearer ', /^Empty Bearer token/],
    ['another scheme', 'Digest username="alice"', /^Unsupported Authorization scheme 'digest'/],
    ['a wrong Basic password', basicAuth('alice', 'wrong'), /^Bad Basic credentials/],
    ['an unknown Basic user', basicAuth('mallory', 'secret'), /^Bad Basic credentials/],
    [
      'Basic credentials without a colon',
      `Basic ${Buffer.from('alice').toString('base64')}`,
      /^Malformed Basic/,
    ],
  ])('when the request has %s, then 401 with WWW-Authenticate', async (_what, authorization, message) => {
    const res = await get('/store/string/some-key', authorization);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: 'unauthorized', status: 401 });
    expect(res.body.message).toMatch(message);
    expect(res.headers['www-authenticate']).toContain('Bearer realm="store"');
    expect(res.headers['www-authenticate']).toContain('Basic realm="store"');
  });

  test('when a bearer token is refused, then the challenge says invalid_token', async () => {
    const res = await get('/store/string/some-key', 'Bearer not-a-known-key-0123456789');
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  test('when the path is under /api or unknown, then it is guarded too', async () => {
    expect((await get('/api/string/some-key')).status).toBe(401);
    expect((await get('/store/nothing/here')).status).toBe(401);
  });
});

describe('good credentials pass', () => {
  test('when a known API key is sent, then the request runs', async () => {
    const res = await get('/store/string/missing-key', bearer(keys.reader));
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
  });

  test('when a Basic user sends the right password, then the request runs (again, from the cache)', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await get('/store/string/missing-key', basicAuth('alice', alicePassword));
      expect(res.status).toBe(404);
    }
  });

  test('when the scheme is spelled in another case, then it is accepted', async () => {
    expect((await get('/store/string/missing-key', `bearer ${keys.reader.key}`)).status).toBe(404);
  });
});

describe('permissions follow the x-permission of each operation', () => {
  // POSTs that only read: set algebra (keys in the body), a rate-limit peek (identifiers in the body).
  const ALGEBRA = ['setUnion', 'setIntersection', 'setDifference', 'peekRateLimit'];
  // GETs that write: the lease keep-alive stream and WebSocket extend the lease for as long as it is open.
  const WRITING_GETS = ['keepLeaseAliveStream', 'keepLeaseAliveWebSocket'];

  test('openapi.yaml maps GET, set algebra and rate-limit peeks to read, other data operations to write, admin to admin', () => {
    for (const op of t.context.contract.operations) {
      const expected = op.path.startsWith('/store/admin/')
        ? 'admin'
        : (op.method === 'get' && !WRITING_GETS.includes(op.id)) || ALGEBRA.includes(op.id)
          ? 'read'
          : 'write';
      expect(`${op.id}: ${op.permission}`).toBe(`${op.id}: ${expected}`);
    }
  });

  // Every served operation of every family (batches are below: their permission depends on their items).
  const served = () => t.context.served.filter((op) => !op.path.endsWith('/batch'));

  test('when the caller lacks the permission, then every served operation is 403 forbidden', async () => {
    const wrong: string[] = [];
    for (const op of served()) {
      const res = await sampleRequest(t, op, bearer(without[op.permission]));
      const ok = res.status === 403 && res.body.message.includes(`lacks the '${op.permission}' permission`);
      if (!ok) wrong.push(`${op.id}: ${res.status} ${res.body.message}`);
    }
    expect(served().length).toBeGreaterThan(0);
    expect(wrong).toEqual([]);
  });

  test('when the caller holds only that permission, then no served operation is refused', async () => {
    const wrong: string[] = [];
    for (const op of served()) {
      const res = await sampleRequest(t, op, bearer(only[op.permission]));
      if (res.status === 401 || res.status === 403) wrong.push(`${op.id}: ${res.status} ${res.body.message}`);
    }
    expect(wrong).toEqual([]);
  });

  test('the 403 message names the credential and the permission', async () => {
    const res = await request(t.data)
      .post('/store/string/k')
      .set('Authorization', bearer(keys.reader))
      .send({ value: 'v' });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({
      error: 'forbidden',
      message: "API key 'reader' lacks the 'write' permission",
    });
    expect(await t.raw.exists(`${t.prefix}k`)).toBe(0);
  });

  test('a Basic user is named in the 403 message', async () => {
    const res = await request(t.data)
      .delete('/store/string/k')
      .set('Authorization', basicAuth('alice', alicePassword));
    expect(res.status).toBe(403);
    expect(res.body.message).toBe("Basic user 'alice' lacks the 'write' permission");
  });
});

describe('the permission is checked before the input', () => {
  test('when a read key sends an invalid write, then 403, not 400', async () => {
    const res = await request(t.data)
      .post('/store/string/k')
      .set('Authorization', bearer(keys.reader))
      .send({ value: 1 });
    expect(res.status).toBe(403);
  });
});

describe('batches need read for reading items and write for writing items', () => {
  const batch = (key: { key: string }, operations: unknown[]) =>
    request(t.data).post('/store/string/batch').set('Authorization', bearer(key)).send({ operations });

  test('when every item reads, then a read key may run it', async () => {
    const res = await batch(keys.reader, [
      { type: 'get', key: 'b1' },
      { type: 'exists', key: 'b2' },
    ]);
    expect(res.status).toBe(200);
  });

  test('when one item writes, then a read key gets 403 and nothing is written', async () => {
    const res = await batch(keys.reader, [
      { type: 'get', key: 'b1' },
      { type: 'set', key: 'b3', value: 'v' },
    ]);
    expect(res.status).toBe(403);
    expect(res.body.message).toContain("'write'");
    expect(await t.raw.exists(`${t.prefix}b3`)).toBe(0);
  });

  test('when one item writes, then a write key may run it', async () => {
    const res = await batch(keys.writer, [{ type: 'set', key: 'b4', value: 'v' }]);
    expect(res.status).toBe(200);
  });

  test('when items read and write, then a write-only key gets 403 and nothing is written', async () => {
    const res = await batch(keys.writer, [
      { type: 'set', key: 'b5', value: 'v' },
      { type: 'get', key: 'b1' },
    ]);
    expect(res.status).toBe(403);
    expect(res.body.message).toContain("'read'");
    expect(await t.raw.exists(`${t.prefix}b5`)).toBe(0);
  });

  test('when every item reads, then a write-only key gets 403', async () => {
    const res = await batch(keys.writer, [{ type: 'get', key: 'b1' }]);
    expect(res.status).toBe(403);
    expect(res.body.message).toContain("'read'");
  });
});

describe("a batch is authorized from its items' types before its items are validated", () => {
  // An invalid score bound: validating it would answer 400 invalid_request naming the item.
  const badRange = { type: 'range', key: 'z', min: `${'1'.repeat(64)}x`, max: '+inf' };
  const post = (key: { key: string }, body: unknown) =>
    request(t.data)
      .post('/store/zset/batch')
      .set('Authorization', bearer(key))
      .send(body as object);

  test('when a key with no permission sends invalid items, then 403 forbidden (not 400): nothing was validated', async () => {
    const res = await post(keys.nothing, { operations: [badRange] });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
  });

  test('when a key with no permission sends a body that is no batch at all, then 403 forbidden', async () => {
    const res = await post(keys.nothing, { operations: 'none' });
    expect(res.status).toBe(403);
  });

  test('when a write-only key sends invalid read items, then 403 naming read', async () => {
    const res = await post(keys.writer, { operations: [badRange] });
    expect(res.status).toBe(403);
    expect(res.body.message).toContain("'read'");
  });

  test('when a read key sends an invalid item among valid reads and a write, then 403 naming write', async () => {
    const res = await post(keys.reader, {
      operations: [
        { type: 'score', key: 'z', member: 'm' },
        { type: 'add', key: 'z', bad: 1 },
      ],
    });
    expect(res.status).toBe(403);
    expect(res.body.message).toContain("'write'");
  });

  test('when the caller has the permission, then the items are validated: 400 naming the item', async () => {
    const res = await post(keys.reader, { operations: [badRange] });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^operations\[0\]/);
  });
});

describe('authorize() on its own (as batches, set algebra and admin routes call it)', () => {
  const res = (principal: unknown) => ({ locals: { principal } }) as unknown as Response;

  test('when a key is outside the prefix, then it throws 403 naming the key', () => {
    const principal = { id: 'tenant', scheme: 'api_key', permissions: ['read'], prefix: 'tenant-a:' };
    expect(() => t.context.access.authorize(res(principal), 'read', ['tenant-a:1', 'tenant-b:2'])).toThrow(
      "Key 'tenant-b:2' is outside the prefix 'tenant-a:' of API key 'tenant'",
    );
    expect(() =>
      t.context.access.authorize(res(principal), 'read', ['tenant-a:1', 'tenant-a:2']),
    ).not.toThrow();
  });

  test('when no principal was stored, then it refuses (a route outside the guard is a bug)', () => {
    expect(() => t.context.access.authorize(res(undefined), 'read', [])).toThrow();
  });
});
