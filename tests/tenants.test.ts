// Tenant prefixes: a prefixed credential touches only keys that start with its prefix (path, batch, set algebra).
import request from 'supertest';
import { FAMILIES } from '../src/families';
import { type TestApp, testApp } from './support/app';
import { apiKey, bearer } from './support/auth';

const tenant = apiKey('tenant', ['read', 'write'], 'tenant-a:');
let t: TestApp;
beforeAll(async () => {
  t = await testApp('tenants', { SVC_API_KEYS: JSON.stringify({ keys: [tenant] }) });
});
afterAll(() => t.close());
const as = (req: request.Test) => req.set('Authorization', bearer(tenant));
const raw = (key: string) => `${t.prefix}${key}`;

describe('a path key', () => {
  test('when it starts with the prefix, then the request runs', async () => {
    const res = await as(request(t.data).post('/store/string/tenant-a:greeting')).send({ value: 'hi' });
    expect(res.status).toBe(201);
    expect(await t.raw.get(raw('tenant-a:greeting'))).toBe('hi');
  });

  test('when it does not, then 403 forbidden naming the key and the prefix, and nothing is written', async () => {
    const res = await as(request(t.data).post('/store/string/tenant-b:greeting')).send({ value: 'hi' });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({
      error: 'forbidden',
      message: "Key 'tenant-b:greeting' is outside the prefix 'tenant-a:' of API key 'tenant'",
    });
    expect(await t.raw.exists(raw('tenant-b:greeting'))).toBe(0);
  });

  test('when a counter is outside the prefix, then 403 and nothing is counted', async () => {
    const inside = await as(
      request(t.data).post('/store/string/tenant-a:views/incr').set('Content-Type', 'application/json'),
    );
    expect([inside.status, inside.body.value]).toEqual([201, 1]);
    const outside = await as(
      request(t.data)
        .post('/store/hash/tenant-b:views/field/home/incr')
        .set('Content-Type', 'application/json'),
    );
    expect(outside.status).toBe(403);
    expect(await t.raw.exists(raw('tenant-b:views'))).toBe(0);
  });

  test('when it reads outside the prefix, then 403 too (even for a missing key)', async () => {
    expect((await as(request(t.data).get('/store/string/other/exists'))).status).toBe(403);
  });
});

describe('a batch', () => {
  test('when one item is outside the prefix, then 403 and no item runs', async () => {
    const res = await as(request(t.data).post('/store/string/batch')).send({
      operations: [
        { type: 'set', key: 'tenant-a:b1', value: 'v' },
        { type: 'set', key: 'tenant-b:b2', value: 'v' },
      ],
    });
    expect(res.status).toBe(403);
    expect(res.body.message).toContain("'tenant-b:b2'");
    expect(await t.raw.exists(raw('tenant-a:b1'), raw('tenant-b:b2'))).toBe(0);
  });

  test('when every item is inside, then it runs', async () => {
    const res = await as(request(t.data).post('/store/string/batch')).send({
      operations: [{ type: 'set', key: 'tenant-a:b3', value: 'v' }],
    });
    expect(res.status).toBe(200);
  });
});

// Set algebra takes its keys from the body; the route is built with the set family.
const setsServed = FAMILIES.some((family) => family.name === 'set');
(setsServed ? describe : describe.skip)('set algebra', () => {
  test('when one listed key is outside the prefix, then 403', async () => {
    const res = await as(request(t.data).post('/store/set/union')).send({
      keys: ['tenant-a:s1', 'tenant-b:s2'],
    });
    expect(res.status).toBe(403);
    expect(res.body.message).toContain("'tenant-b:s2'");
  });

  test('when every listed key is inside, then it runs', async () => {
    const res = await as(request(t.data).post('/store/set/intersection')).send({
      keys: ['tenant-a:s1', 'tenant-a:s2'],
    });
    expect(res.status).toBe(200);
  });
});
