// ETags on the routes: whole-key reads answer one, If-None-Match gives 304s, If-Match guards every write.
import request from 'supertest';
import { FAMILIES } from '../src/families';
import { type TestApp, testApp } from './support/app';
import { sampleRequest } from './support/auth';
import { responseProblems } from './support/schemas';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('etags');
});
afterAll(() => t.close());

const api = () => request(t.data);
const raw = (key: string) => `${t.prefix}${key}`;
const ETAG = /^"[0-9a-f]{40}"$/;
/** Seeds a key of a family the way another Redis client would (the family's sample command). */
const seed = (family: (typeof FAMILIES)[number], key: string) =>
  t.raw.call(family.sample[0], raw(key), ...family.sample.slice(1));

describe.each(FAMILIES.map((f) => [f.name, f] as const))('a whole %s read', (name, family) => {
  test('when the key exists, then GET and HEAD answer the same strong ETag, which changes with the content only', async () => {
    await seed(family, `${name}-r`);
    const get = await api().get(`/store/${name}/${name}-r`);
    expect(get.status).toBe(200);
    expect(get.headers.etag).toMatch(ETAG);
    const head = await api().head(`/store/${name}/${name}-r`);
    expect(head.headers.etag).toBe(get.headers.etag);
    // The TTL is not content: an expiry leaves the ETag as it was.
    await t.raw.expire(raw(`${name}-r`), 1000);
    expect((await api().get(`/store/${name}/${name}-r`)).headers.etag).toBe(get.headers.etag);
    // A change by another client, straight in Redis, is seen.
    const change: Record<string, string[]> = {
      string: ['APPEND', 'x'],
      hash: ['HSET', 'g', 'w'],
      set: ['SADD', 'o'],
      zset: ['ZADD', '5', 'o'],
      list: ['RPUSH', 'o'],
    };
    const [command, ...args] = change[name] as string[];
    await t.raw.call(command as string, raw(`${name}-r`), ...args);
    expect((await api().get(`/store/${name}/${name}-r`)).headers.etag).not.toBe(get.headers.etag);
  });

  test('when If-None-Match lists the current ETag, then 304 with the ETag and no body; otherwise 200, and 404 once the key is gone', async () => {
    await seed(family, `${name}-304`);
    const first = await api().get(`/store/${name}/${name}-304`);
    const etag = first.headers.etag as string;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await api().get(`/store/${name}/${name}-304`).set('If-None-Match', header);
      expect([header, again.status, again.text, again.headers.etag]).toEqual([header, 304, '', etag]);
      expect(responseProblems('get', `/store/${name}/{key}`, 304, undefined)).toBe('');
    }
    const other = await api().get(`/store/${name}/${name}-304`).set('If-None-Match', '"other"');
    expect(other.status).toBe(200);
    await t.raw.del(raw(`${name}-304`));
    const gone = await api().get(`/store/${name}/${name}-304`).set('If-None-Match', etag);
    expect(gone.status).toBe(404);
  });

  test('when an ETag header is not an entity-tag list, then 400 invalid_request', async () => {
    const res = await api().get(`/store/${name}/${name}-bad`).set('If-None-Match', 'abc');
    expect([res.status, res.body.error]).toEqual([400, 'invalid_request']);
  });
});

/** Every write route of every family, from the contract's list of what the app serves. */
const writeRoutes = () =>
  t.context.served.filter(
    (op) => op.permission === 'write' && FAMILIES.some((f) => op.path.startsWith(`/store/${f.name}/{key}`)),
  );
const familyOf = (path: string) => FAMILIES.find((f) => path.startsWith(`/store/${f.name}/`));

describe('If-Match on every write route', () => {
  test('the routes are found (every family has writes)', () => {
    const families = new Set(writeRoutes().map((op) => familyOf(op.path)?.name));
    expect([...families].sort()).toEqual(FAMILIES.map((f) => f.name).sort());
  });

  test('when If-Match lists another ETag (or only a weak one), then 412 with the current ETag and nothing changes', async () => {
    const problems: string[] = [];
    for (const op of writeRoutes()) {
      const key = `k-${op.id}`;
      await seed(familyOf(op.path) as (typeof FAMILIES)[number], key);
      const before = await t.raw.dumpBuffer(raw(key));
      const current = (await api().get(`/store/${familyOf(op.path)?.name}/${key}`)).headers.etag;
      for (const header of ['"0000"', `W/${current}`]) {
        const res = await sampleRequest(t, op).set('If-Match', header);
        const problem = responseProblems(op.method, op.path, res.status, res.body);
        if (res.status !== 412 || res.body.error !== 'precondition_failed' || res.headers.etag !== current)
          problems.push(`${op.method} ${op.path} (${header}): ${res.status} ${res.headers.etag}`);
        if (problem) problems.push(problem);
      }
      if (!(await t.raw.dumpBuffer(raw(key)))?.equals(before as Buffer))
        problems.push(`${op.id} changed the key`);
    }
    expect(problems).toEqual([]);
  });

  test('when If-Match lists the current ETag, then the write applies and answers the new ETag', async () => {
    const problems: string[] = [];
    for (const op of writeRoutes()) {
      const family = familyOf(op.path) as (typeof FAMILIES)[number];
      const key = `k-${op.id}`;
      await t.raw.del(raw(key));
      await seed(family, key);
      const current = (await api().get(`/store/${family.name}/${key}`)).headers.etag as string;
      const res = await sampleRequest(t, op).set('If-Match', `"other", ${current}`);
      const problem = responseProblems(op.method, op.path, res.status, res.body);
      if (problem) problems.push(problem);
      // The sample string 'v' is no number: an increment is 422, after its precondition held.
      if (res.status >= 300 && !(res.status === 422 && op.path.endsWith('/incr')))
        problems.push(`${op.method} ${op.path}: ${res.status} ${res.body.error}`);
      const after = await api().get(`/store/${family.name}/${key}`);
      if (res.status < 300 && res.headers.etag !== after.headers.etag)
        problems.push(
          `${op.method} ${op.path}: answered ${res.headers.etag}, the key has ${after.headers.etag}`,
        );
    }
    expect(problems).toEqual([]);
  });

  test('when If-Match lists an ETag and the key does not exist, then 412 without an ETag and nothing is written', async () => {
    for (const op of writeRoutes()) {
      await t.raw.del(raw(`k-${op.id}`));
      const res = await sampleRequest(t, op).set('If-Match', '"0000"');
      expect([op.id, res.status, res.headers.etag]).toEqual([op.id, 412, undefined]);
    }
    for (const op of writeRoutes()) expect(await t.raw.exists(raw(`k-${op.id}`))).toBe(0);
  });
});

describe('DELETE /store/keys/{key} (any type)', () => {
  test('when If-Match lists another ETag, then 412 and the key stays; with its ETag, it is deleted', async () => {
    await t.raw.rpush(raw('any'), 'a');
    const etag = (await api().get('/store/list/any')).headers.etag as string;
    const stale = await api().delete('/store/keys/any').set('If-Match', '"0000"');
    expect([stale.status, stale.headers.etag]).toEqual([412, etag]);
    expect(await t.raw.exists(raw('any'))).toBe(1);
    const res = await api().delete('/store/keys/any').set('If-Match', etag);
    expect([res.status, res.body]).toEqual([200, { success: true, deleted: true }]);
    const gone = await api().delete('/store/keys/any').set('If-Match', '*');
    expect([gone.status, gone.body.error]).toEqual([412, 'precondition_failed']);
  });
});

describe('If-Match: *', () => {
  test('when a whole-key write is sent with it, then it applies to an existing key and is 412 on a missing one', async () => {
    const missing = await api()
      .post('/store/hash/star-h')
      .set('If-Match', '*')
      .send({ fields: { a: '1' } });
    expect([missing.status, missing.body.error]).toEqual([412, 'precondition_failed']);
    expect(await t.raw.exists(raw('star-h'))).toBe(0);
    await t.raw.hset(raw('star-h'), 'a', '0');
    const present = await api()
      .post('/store/hash/star-h')
      .set('If-Match', '*')
      .send({ fields: { a: '1' } });
    expect(present.status).toBe(200);
    expect(present.headers.etag).toMatch(ETAG);
  });

  test('when a field or member DELETE is sent with it, then it keeps its own meaning: 404 for a missing element', async () => {
    const field = await api().delete('/store/hash/star-none/field/a').set('If-Match', '*');
    expect([field.status, field.body.error]).toEqual([404, 'field_not_found']);
    const member = await api().delete('/store/set/star-none/member/a').set('If-Match', '*');
    expect([member.status, member.body.error]).toEqual([404, 'member_not_found']);
  });
});

describe('what requests pay', () => {
  test('when a write carries no condition, then it answers the new ETag if the key is small, none for a big one (computing it reads the whole key)', async () => {
    const res = await api().post('/store/string/plain').send({ value: 'v' });
    expect(res.status).toBe(201);
    expect(res.headers.etag).toBe((await api().get('/store/string/plain')).headers.etag);
    const field = await api().post('/store/hash/plain-hash/field/f').send({ value: 'v' });
    expect(field.headers.etag).toBe((await api().get('/store/hash/plain-hash')).headers.etag);
    const big = await api()
      .post('/store/string/plain-big')
      .send({ value: 'x'.repeat(16385) });
    expect(big.status).toBe(201);
    expect(big.headers.etag).toBeUndefined();
    await t.raw.hset(raw('plain-big-hash'), ...Array.from({ length: 129 }, (_, i) => [`f${i}`, 'v']).flat());
    const bigField = await api().post('/store/hash/plain-big-hash/field/f').send({ value: 'w' });
    expect(bigField.headers.etag).toBeUndefined();
    // Asked for (a conditional write), it is answered whatever the size.
    const asked = await api()
      .post('/store/hash/plain-big-hash/field/f')
      .set('If-Match', '*')
      .send({ value: 'z' });
    expect(asked.headers.etag).toBe((await api().get('/store/hash/plain-big-hash')).headers.etag);
  });

  test('when a field is read, then no ETag is computed or sent', async () => {
    await t.raw.hset(raw('field-read'), 'a', '1');
    expect((await api().get('/store/hash/field-read/field/a')).headers.etag).toBeUndefined();
  });

  test.each([
    ['list', (key: string) => t.raw.rpush(key, ...Array.from({ length: 1001 }, (_, i) => `v${i}`))],
    [
      'zset',
      (key: string) => t.raw.zadd(key, ...Array.from({ length: 1001 }, (_, i) => [i, `m${i}`]).flat()),
    ],
  ])(
    'when a page of a %s of more than 128 elements is read, then no ETag unless If-None-Match asks (its digest reads the whole key)',
    async (name, fill) => {
      await fill(raw(`big-${name}`));
      const plain = await api().get(`/store/${name}/big-${name}`);
      expect(plain.status).toBe(200);
      expect(plain.headers.etag).toBeUndefined();
      const asked = await api().get(`/store/${name}/big-${name}`).set('If-None-Match', '"0"');
      expect(asked.headers.etag).toMatch(ETAG);
      const again = await api()
        .get(`/store/${name}/big-${name}`)
        .set('If-None-Match', asked.headers.etag as string);
      expect(again.status).toBe(304);
      // A conditional write still checks it, and answers the new one.
      const write =
        name === 'list'
          ? api()
              .post(`/store/list/big-list/push`)
              .send({ values: ['x'] })
          : api()
              .post(`/store/zset/big-zset/member/x`)
              .set('Content-Type', 'application/json')
              .send({ score: 1 });
      const written = await write.set('If-Match', asked.headers.etag as string);
      expect([200, 201]).toContain(written.status);
      expect(written.headers.etag).toMatch(ETAG);
    },
  );
});

describe('a precondition a write does not implement', () => {
  test.each([
    ['post', '/store/string/inm-counter/incr'],
    ['post', '/store/hash/inm-hash/field/f/incr'],
    ['post', '/store/zset/inm-zset/member/m/incr'],
    ['delete', '/store/string/inm-counter'],
    ['post', '/store/string/inm-counter/expire'],
  ] as const)(
    'when %s %s gets If-None-Match, then 400 and nothing changes (never silently unconditional)',
    async (method, path) => {
      await t.raw.set(raw('inm-counter'), '5');
      const res = await api()
        [method](path)
        .set('If-None-Match', '*')
        .send(path.endsWith('expire') ? { ttl: 60 } : {});
      expect([res.status, res.body.error]).toEqual([400, 'invalid_request']);
      expect(res.body.message).toContain('does not take if-none-match');
      expect(await t.raw.get(raw('inm-counter'))).toBe('5');
      expect(await t.raw.ttl(raw('inm-counter'))).toBe(-1);
      expect(await t.raw.exists(raw('inm-hash'), raw('inm-zset'))).toBe(0);
    },
  );
});

describe('a read-modify-write loop', () => {
  /** Reads the hash, adds 1 to field n, writes it back under If-Match; retries on 412. Bounded in time. */
  async function increments(count: number, deadline: number): Promise<{ done: number; conflicts: number }> {
    let done = 0;
    let conflicts = 0;
    while (done < count && Date.now() < deadline) {
      const read = await api().get('/store/hash/rmw');
      const n = Number(read.body.fields.n);
      const write = await api()
        .post('/store/hash/rmw/field/n')
        .set('If-Match', read.headers.etag as string)
        .send({ value: String(n + 1) });
      if (write.status === 412) conflicts++;
      else if (write.status === 200) done++;
      else throw new Error(`unexpected ${write.status} ${JSON.stringify(write.body)}`);
    }
    return { done, conflicts };
  }

  test('when two clients increment one field concurrently with If-Match, then no update is lost', async () => {
    await t.raw.hset(raw('rmw'), 'n', '0', 'other', 'x');
    const deadline = Date.now() + 60_000;
    const [a, b] = await Promise.all([increments(30, deadline), increments(30, deadline)]);
    expect([a.done, b.done]).toEqual([30, 30]);
    expect(await t.raw.hget(raw('rmw'), 'n')).toBe('60');
  }, 90_000);
});
