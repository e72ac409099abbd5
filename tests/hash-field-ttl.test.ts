// Hash-field TTLs (HEXPIRE, HTTL: Redis 8 / Valkey 9) on the one-field write and read, and what servers without them
// answer: the capability probe decides (redis/capabilities.ts fieldExpiry).
import request from 'supertest';
import { runOp } from '../src/engine/run';
import { hashes } from '../src/families/hash';
import { hashOps } from '../src/ops/hashes';
import { type TestApp, testApp } from './support/app';
import { expectSchema } from './support/schemas';

let t: TestApp;
let hasFieldTtl = false;
beforeAll(async () => {
  t = await testApp('hash-field-ttl');
  hasFieldTtl = await t.raw.call('HTTL', `${t.prefix}probe`, 'FIELDS', '1', 'f').then(
    () => true,
    () => false,
  );
  if (!hasFieldTtl) console.log('hash-field-ttl: this server has no HEXPIRE; only the refusal is tested');
});
afterAll(() => t.close());

const api = () => request(t.data);
const raw = (key: string) => `${t.prefix}${key}`;
const fieldTtl = async (key: string, field: string) =>
  ((await t.raw.call('HTTL', raw(key), 'FIELDS', '1', field)) as number[])[0];

describe('a field write with ttl, on a server with hash-field expiry', () => {
  test('when ttl is given, then the field expires in ttl seconds and the key keeps no expiry', async () => {
    if (!hasFieldTtl) return;
    await t.raw.hset(raw('ft:1'), 'keep', 'x');
    const res = await api().post('/store/hash/ft:1/field/code').send({ value: '123456', ttl: 300 });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ success: true, field: 'code', value: '123456' });
    const ttl = await fieldTtl('ft:1', 'code');
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300);
    expect(await fieldTtl('ft:1', 'keep')).toBe(-1);
    expect(await t.raw.ttl(raw('ft:1'))).toBe(-1);
  });

  test('when If-None-Match: * finds the field, then 409 and its TTL is unchanged', async () => {
    if (!hasFieldTtl) return;
    await t.raw.hset(raw('ft:2'), 'f', 'old');
    const res = await api()
      .post('/store/hash/ft:2/field/f')
      .set('If-None-Match', '*')
      .send({ value: 'new', ttl: 60 });
    expect(res.status).toBe(409);
    expect(await t.raw.hget(raw('ft:2'), 'f')).toBe('old');
    expect(await fieldTtl('ft:2', 'f')).toBe(-1);
  });

  test('when a write without ttl replaces the field, then the field has no TTL any more', async () => {
    if (!hasFieldTtl) return;
    await api().post('/store/hash/ft:3/field/f').send({ value: 'a', ttl: 60 }).expect(201);
    await api().post('/store/hash/ft:3/field/f').send({ value: 'b' }).expect(200);
    expect(await fieldTtl('ft:3', 'f')).toBe(-1);
  });

  test('when ttl is not a positive integer, then 400 and nothing is written', async () => {
    const res = await api().post('/store/hash/ft:4/field/f').send({ value: 'a', ttl: 0 });
    expect(res.status).toBe(400);
    expect(await t.raw.exists(raw('ft:4'))).toBe(0);
  });
});

describe('a field write with ttl, on a server without hash-field expiry', () => {
  test('then 501 command_refused naming HEXPIRE and hash-field expiry, and nothing is written', async () => {
    if (hasFieldTtl) return;
    await t.raw.hset(raw('old:1'), 'f', 'before');
    const res = await api().post('/store/hash/old:1/field/f').send({ value: 'after', ttl: 60 });
    expect(res.status).toBe(501);
    expect(res.body.error).toBe('command_refused');
    expect(res.body.message).toMatch(/HEXPIRE: it has no hash-field expiry/);
    expect(await t.raw.hget(raw('old:1'), 'f')).toBe('before');
    const fresh = await api().post('/store/hash/old:2/field/f').send({ value: 'x', ttl: 60 });
    expect(fresh.status).toBe(501);
    expect(await t.raw.exists(raw('old:2'))).toBe(0);
  });

  test('when a batch holds a field write with ttl, then the whole batch is 501 and nothing of it is written', async () => {
    if (hasFieldTtl) return;
    const res = await api()
      .post('/store/hash/batch')
      .send({
        operations: [
          { type: 'setField', key: 'old:3', field: 'a', value: 'x' },
          { type: 'setField', key: 'old:3', field: 'b', value: 'y', ttl: 60 },
        ],
      });
    expect([res.status, res.body.error, res.body.details?.index]).toEqual([501, 'command_refused', 1]);
    expect(await t.raw.exists(raw('old:3'))).toBe(0);
  });

  test('when the field is read, then ttl is -1 and the read is HGET alone (no HTTL is sent)', async () => {
    if (hasFieldTtl) return;
    await t.raw.hset(raw('old:4'), 'f', 'v');
    const res = await api().get('/store/hash/old:4/field/f');
    expect([res.status, res.body]).toEqual([200, { field: 'f', value: 'v', ttl: -1 }]);
    const batch = await api()
      .post('/store/hash/batch')
      .send({ operations: [{ type: 'getField', key: 'old:4', field: 'f' }] });
    expect(batch.body.results).toEqual([
      { type: 'getField', success: true, field: 'f', value: 'v', ttl: -1 },
    ]);
    expect(builtRead('old:4', 'f')).toEqual(['hash', 'HGET', 'f']);
  });

  test('when /store/admin/info is read, then HTTL and HEXPIRE are unavailable, each saying what it affects', async () => {
    if (hasFieldTtl) return;
    const { unavailable } = (await api().get('/store/admin/info')).body.server;
    const of = (command: string) => unavailable.find((r: { command: string }) => r.command === command);
    expect(of('HTTL')).toEqual({
      command: 'HTTL',
      reason: 'unknown command: renamed or disabled',
      affects: expect.stringMatching(/field read answers ttl -1/),
    });
    expect(of('HEXPIRE').affects).toMatch(/field write with ttl answers 501/);
  });

  test('when an operation is built before the first probe answered, then the scripts decide: 501 and -1', async () => {
    if (hasFieldTtl) return;
    const unprobed = hashOps({ maxValueBytes: 1024 });
    const write = runOp(
      t.context.store,
      unprobed.setField({ key: 'old:5', field: 'f', value: 'v', ttl: 60 }),
    );
    await expect(write).rejects.toMatchObject({ type: 'command_refused' });
    expect(await t.raw.exists(raw('old:5'))).toBe(0);
    await t.raw.hset(raw('old:5'), 'f', 'v');
    const read = unprobed.getField({ key: 'old:5', field: 'f' });
    expect(read.commands[0]?.args).toEqual(['hash', 'FIELD', 'f']);
    expect((await runOp(t.context.store, read)).body).toEqual({ field: 'f', value: 'v', ttl: -1 });
  });
});

/** The arguments of the field read a batch item builds, with this app's latest probe. */
const builtRead = (key: string, field: string) => {
  const { batch } = hashes.bind({ maxValueBytes: 1024, capabilities: () => t.context.capabilities.current });
  return batch.get('getField')?.({ type: 'getField', key, field }).commands[0]?.args;
};

describe('a field read, on a server with hash-field expiry', () => {
  test("when the field has a TTL, then ttl is its remaining seconds; another field's is -1", async () => {
    if (!hasFieldTtl) return;
    await api()
      .post('/store/hash/fr:1')
      .send({ fields: { keep: 'x' }, ttl: 1000 })
      .expect(201);
    await api().post('/store/hash/fr:1/field/code').send({ value: '123456', ttl: 300 }).expect(201);
    const res = await api().get('/store/hash/fr:1/field/code');
    expect(res.status).toBe(200);
    expectSchema('FieldResponse', res.body);
    expect(res.body).toEqual({ field: 'code', value: '123456', ttl: expect.any(Number) });
    expect(res.body.ttl).toBeGreaterThan(0);
    expect(res.body.ttl).toBeLessThanOrEqual(300);
    // The key's own TTL (1000) is not the field's.
    expect((await api().get('/store/hash/fr:1/field/keep')).body).toEqual({
      field: 'keep',
      value: 'x',
      ttl: -1,
    });
    expect(builtRead('fr:1', 'code')).toEqual(['hash', 'FIELD', 'code']);
  });

  test('when a batch reads fields (the script path), then each answers the same ttl as the single read', async () => {
    if (!hasFieldTtl) return;
    await t.raw.hset(raw('fr:2'), 'a', '1', 'b', '2');
    await t.raw.call('HEXPIRE', raw('fr:2'), '500', 'FIELDS', '1', 'a');
    const res = await api()
      .post('/store/hash/batch')
      .send({
        operations: [
          { type: 'getField', key: 'fr:2', field: 'a' },
          { type: 'getField', key: 'fr:2', field: 'b' },
          { type: 'getField', key: 'fr:2', field: 'c' },
        ],
      });
    expectSchema('HashBatchResponse', res.body);
    const [a, b, c] = res.body.results;
    expect(a).toEqual({ type: 'getField', success: true, field: 'a', value: '1', ttl: expect.any(Number) });
    expect(a.ttl).toBeGreaterThan(490);
    expect(b).toEqual({ type: 'getField', success: true, field: 'b', value: '2', ttl: -1 });
    expect([c.success, c.error.error]).toEqual([false, 'field_not_found']);
    const single = await api().get('/store/hash/fr:2/field/a');
    expect(single.body.ttl).toBeLessThanOrEqual(a.ttl);
    expect(single.body.ttl).toBeGreaterThan(490);
  });

  test('when the field or the hash is missing, then 404 field_not_found', async () => {
    if (!hasFieldTtl) return;
    await t.raw.hset(raw('fr:3'), 'a', '1');
    for (const path of ['/store/hash/fr:3/field/b', '/store/hash/fr:none/field/a']) {
      const res = await api().get(path);
      expect([res.status, res.body.error]).toEqual([404, 'field_not_found']);
    }
  });

  test('when the field has expired, then 404 field_not_found', async () => {
    if (!hasFieldTtl) return;
    await t.raw.hset(raw('fr:4'), 'gone', 'x', 'kept', 'y');
    await t.raw.call('HPEXPIRE', raw('fr:4'), '1', 'FIELDS', '1', 'gone');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const res = await api().get('/store/hash/fr:4/field/gone');
    expect([res.status, res.body.error]).toEqual([404, 'field_not_found']);
  });
});

describe('a field read whose field expires between HGET and HTTL', () => {
  test('when HTTL answers -2 beside a value, then 404 field_not_found, as a read a moment later', () => {
    const read = hashOps({ maxValueBytes: 1024 }).getField({ key: 'k', field: 'f' });
    expect(() => read.result([['v', -1, -2]])).toThrow(expect.objectContaining({ type: 'field_not_found' }));
    expect(read.result([['v', -1, 7]]).body).toEqual({ field: 'f', value: 'v', ttl: 7 });
  });
});
