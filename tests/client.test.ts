// The TypeScript client (clients/typescript) against a real service: each family, errors, update(), keys, batch.
import { createGateway, type Gateway, GatewayError } from '../clients/typescript/src/index';
import { apiKey } from './support/auth';
import { type Served, served } from './support/served';

const writer = apiKey('client-writer', ['read', 'write']);
const reader = apiKey('client-reader', ['read']);
const tenant = apiKey('client-tenant', ['read', 'write'], 'tenant-a:');
let s: Served;
let gw: Gateway;
beforeAll(async () => {
  s = await served('client', { SVC_API_KEYS: JSON.stringify({ keys: [writer, reader, tenant] }) });
  gw = createGateway({ baseUrl: s.base, token: writer.key });
});
afterAll(() => s.close());

describe('strings', () => {
  test('when a value is set, then get answers it with its TTL and ETag; a missing key is null', async () => {
    expect(await gw.strings.set('greeting', 'hello', { ttl: 100 })).toMatchObject({ created: true });
    const got = await gw.strings.get('greeting');
    expect(got).toMatchObject({ value: 'hello' });
    expect(got?.ttl).toBeGreaterThan(0);
    expect(got?.etag).toMatch(/^"/);
    expect(await gw.strings.get('no-such-key')).toBeNull();
    expect(await gw.strings.exists('greeting')).toBe(true);
    expect(await gw.strings.delete('greeting')).toBe(true);
    expect(await gw.strings.delete('greeting')).toBe(false);
  });

  test('when a counter passes 2^53, then incr answers it exactly as a bigint', async () => {
    await gw.strings.set('big', '9007199254740990');
    expect(await gw.strings.incr('big', 5)).toBe(9007199254740995n);
    expect(await gw.strings.incr('fresh-counter')).toBe(1n);
  });

  test('when another client changes the value during update(), then fn runs again on the new value', async () => {
    await gw.strings.set('doc', 'a');
    let calls = 0;
    await gw.strings.update('doc', async (current) => {
      calls++;
      // The first time round, another writer gets in between the read and the conditional write.
      if (calls === 1) await gw.strings.set('doc', `${current}b`);
      return `${current}c`;
    });
    expect(calls).toBe(2);
    expect((await gw.strings.get('doc'))?.value).toBe('abc');
  });

  test('when update() finds no key, then it creates one (If-None-Match: *)', async () => {
    await gw.strings.update('doc-new', (current) => `${current ?? ''}first`);
    expect((await gw.strings.get('doc-new'))?.value).toBe('first');
  });
});

describe('errors', () => {
  test('when a write is refused, then the GatewayError carries the JSON error', async () => {
    await gw.hashes.set('typed', { a: '1' });
    const err = await gw.strings.get('typed').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ error: 'wrong_type', status: 409 });
    expect((err as GatewayError).requestId).toEqual(expect.any(String));
    expect((err as GatewayError).message).toContain('typed');
  });

  test('when If-Match names an old ETag, then 412 precondition_failed carries the current ETag', async () => {
    const { etag: old } = await gw.strings.set('cas', 'one');
    const { etag: now } = await gw.strings.set('cas', 'two');
    const err = (await gw.strings.set('cas', 'three', { ifMatch: old }).catch((e) => e)) as GatewayError;
    expect(err).toMatchObject({ error: 'precondition_failed', status: 412, etag: now });
  });

  test('when a read-only key writes, then 403 forbidden; when the key is unknown, then 401', async () => {
    const ro = createGateway({ baseUrl: s.base, token: reader.key });
    await expect(ro.strings.set('x', 'y')).rejects.toMatchObject({ error: 'forbidden', status: 403 });
    const nobody = createGateway({ baseUrl: s.base, token: 'not-a-key-0123456789' });
    await expect(nobody.strings.get('x')).rejects.toMatchObject({ error: 'unauthorized', status: 401 });
  });

  test('when nothing listens, then a network_error (status 0), after the retries', async () => {
    const off = createGateway({ baseUrl: 'http://127.0.0.1:9', retry: { retries: 1, baseDelayMs: 1 } });
    await expect(off.strings.get('x')).rejects.toMatchObject({ error: 'network_error', status: 0 });
  });
});

describe('hashes, sets, lists, sorted sets', () => {
  test('hash fields are read and written one at a time or whole; update() replaces the hash under If-Match', async () => {
    await gw.hashes.set('user:1', { name: 'Ada' });
    await gw.hashes.setField('user:1', 'lang', 'en');
    expect(await gw.hashes.getField('user:1', 'lang')).toBe('en');
    expect(await gw.hashes.getField('user:1', 'nope')).toBeNull();
    expect(await gw.hashes.incrField('user:1', 'visits', 2)).toBe(2n);
    await gw.hashes.update('user:1', (fields) => ({ ...fields, name: 'Ada L.' }));
    expect((await gw.hashes.get('user:1'))?.fields).toEqual({ name: 'Ada L.', lang: 'en', visits: '2' });
    expect(await gw.hashes.deleteField('user:1', 'lang')).toBe(true);
    expect(await gw.hashes.getField('user:1', 'a/b c')).toBeNull();
  });

  test('set members are added, checked and removed', async () => {
    expect(await gw.sets.add('tags', ['a', 'b', 'b'])).toMatchObject({ added: 2, count: 2 });
    expect(await gw.sets.has('tags', 'a')).toBe(true);
    expect(await gw.sets.remove('tags', 'a')).toBe(true);
    expect((await gw.sets.get('tags'))?.members).toEqual(['b']);
  });

  test('a list is a queue: push, pop, and a pop that waits for the next push', async () => {
    expect(await gw.lists.push('jobs', ['j1', 'j2'])).toBe(2);
    expect(await gw.lists.pop('jobs')).toEqual(['j1']);
    expect((await gw.lists.range('jobs'))?.values).toEqual(['j2']);
    expect(await gw.lists.pop('jobs', { count: 5 })).toEqual(['j2']);
    expect(await gw.lists.pop('jobs')).toEqual([]);
    const waiting = gw.lists.pop('jobs', { wait: 10 });
    await gw.lists.push('jobs', ['j3']);
    expect(await waiting).toEqual(['j3']);
  });

  test('a sorted set is read by rank and by score range', async () => {
    await gw.zsets.add('board', { alice: 4200, bob: 3100, carol: 5000 });
    expect((await gw.zsets.get('board', { rev: true, limit: 2 }))?.members).toEqual([
      { member: 'carol', score: 5000 },
      { member: 'alice', score: 4200 },
    ]);
    const range = await gw.zsets.range('board', { min: 3000, max: '(5000' });
    expect(range.members.map((m) => m.member)).toEqual(['bob', 'alice']);
    expect(await gw.zsets.remove('board', ['bob'])).toBe(1);
  });
});

describe('keys and batches', () => {
  test('keys.list() walks every page: 25 keys in pages of 4', async () => {
    const names = Array.from({ length: 25 }, (_, i) => `walk:${i}`);
    await gw.batch(
      'string',
      names.map((key) => ({ type: 'set' as const, key, value: 'v' })),
    );
    const seen = new Set<string>();
    for await (const entry of gw.keys.list({ prefix: 'walk:', limit: 4 })) {
      expect(entry.type).toBe('string');
      seen.add(entry.key);
    }
    expect([...seen].sort()).toEqual([...names].sort());
    expect(await gw.keys.info('walk:0')).toMatchObject({ type: 'string', size: 1 });
    expect(await gw.keys.info('walk:none')).toBeNull();
  });

  test('a batch answers one typed result per operation', async () => {
    const out = await gw.batch('hash', [
      { type: 'set', key: 'bh', fields: { a: '1' } },
      { type: 'getField', key: 'bh', field: 'a' },
      { type: 'getField', key: 'bh-missing', field: 'a' },
    ]);
    expect(out.atomic).toBe(true);
    expect(out.results.map((r) => r.success)).toEqual([true, true, false]);
  });

  test('whoami names the credential; a tenant lists only its own keys', async () => {
    expect(await gw.whoami()).toEqual({
      id: 'client-writer',
      scheme: 'api_key',
      permissions: ['read', 'write'],
      prefix: null,
    });
    const t = createGateway({ baseUrl: s.base, token: tenant.key });
    expect((await t.whoami()).prefix).toBe('tenant-a:');
    await t.strings.set('tenant-a:one', '1');
    const listed = [];
    for await (const entry of t.keys.list()) listed.push(entry.key);
    expect(listed).toEqual(['tenant-a:one']);
    await expect(t.strings.get('walk:0')).rejects.toMatchObject({ error: 'forbidden' });
  });
});
