// Any bytes as values: encoding=base64 round-trips every byte 0-255 through every family and batches; 422 otherwise.
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('binary');
});
afterAll(() => t.close());

const api = () => request(t.data);
const raw = (key: string) => Buffer.from(`${t.prefix}${key}`);

/** Every byte value 0-255 once, shuffled with random bytes around it. */
const allBytes = () =>
  Buffer.concat([randomBytes(7), Buffer.from([...Array(256).keys()].reverse()), randomBytes(9)]);
const b64 = (b: Buffer) => b.toString('base64');
const NOT_UTF8 = Buffer.from([0xff, 0xfe, 0x00, 0xc3]);

describe('strings', () => {
  test('when a value of every byte is written in base64, then Redis holds the bytes and a base64 read answers them', async () => {
    const bytes = allBytes();
    await api()
      .post('/store/string/b-s')
      .send({ value: b64(bytes), encoding: 'base64' })
      .expect(201);
    expect((await t.raw.getBuffer(raw('b-s')))?.equals(bytes)).toBe(true);
    const res = await api().get('/store/string/b-s?encoding=base64').expect(200);
    expect(res.body.value).toBe(b64(bytes));
    expect(res.headers.etag).toBeDefined();
  });

  test('when a stored value is not UTF-8 and no encoding is asked, then 422 binary_value naming the option', async () => {
    await t.raw.set(raw('b-bad'), NOT_UTF8);
    const res = await api().get('/store/string/b-bad').expect(422);
    expect(res.body.error).toBe('binary_value');
    expect(res.body.message).toContain('encoding=base64');
  });

  test('when a stored text holds U+FFFD itself, then it is answered as text', async () => {
    await api().post('/store/string/b-fffd').send({ value: 'a\uFFFDb' }).expect(201);
    expect((await api().get('/store/string/b-fffd').expect(200)).body.value).toBe('a\uFFFDb');
  });

  test('when the value is not base64, then 400 invalid_value and nothing is written', async () => {
    const res = await api().post('/store/string/b-nope').send({ value: 'not base64!', encoding: 'base64' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_value');
    expect(await t.raw.exists(raw('b-nope'))).toBe(0);
  });
});

describe('hashes', () => {
  test('when field names and values are any bytes, then they round-trip in base64 (whole, field, keys, values)', async () => {
    const name = allBytes();
    const value = allBytes();
    await api()
      .post('/store/hash/b-h')
      .send({
        fields: { [b64(name)]: b64(value), [b64(Buffer.from('plain'))]: b64(NOT_UTF8) },
        encoding: 'base64',
      })
      .expect(201);
    expect((await t.raw.hgetBuffer(raw('b-h'), name))?.equals(value)).toBe(true);
    const whole = await api().get('/store/hash/b-h?encoding=base64').expect(200);
    expect(whole.body.fields[b64(name)]).toBe(b64(value));
    const field = await api()
      .get(`/store/hash/b-h/field/${encodeURIComponent(b64(name))}?encoding=base64`)
      .expect(200);
    expect(field.body).toEqual({ field: b64(name), value: b64(value), ttl: -1 });
    const keys = await api().get('/store/hash/b-h/keys?encoding=base64').expect(200);
    expect(keys.body.keys).toContain(b64(name));
    expect((await api().get('/store/hash/b-h/values').expect(422)).body.error).toBe('binary_value');
  });
});

describe('sets, lists and sorted sets', () => {
  test('when set members are any bytes, then add, read and pop round-trip them in base64', async () => {
    const members = [allBytes(), NOT_UTF8];
    await api()
      .post('/store/set/b-set')
      .send({ members: members.map(b64), encoding: 'base64' })
      .expect(201);
    const res = await api().get('/store/set/b-set?encoding=base64').expect(200);
    expect([...res.body.members].sort()).toEqual(members.map(b64).sort());
    const union = await api()
      .post('/store/set/union')
      .send({ keys: ['b-set'], encoding: 'base64' })
      .expect(200);
    expect(union.body.union).toHaveLength(2);
  });

  test('when list elements are any bytes, then push, range, index and pop round-trip them', async () => {
    const values = [allBytes(), NOT_UTF8, Buffer.alloc(0)];
    await api()
      .post('/store/list/b-l/push')
      .send({ values: values.map(b64), encoding: 'base64' })
      .expect(201);
    expect((await api().get('/store/list/b-l?encoding=base64').expect(200)).body.values).toEqual(
      values.map(b64),
    );
    expect((await api().get('/store/list/b-l/index/1?encoding=base64').expect(200)).body.value).toBe(
      b64(NOT_UTF8),
    );
    const popped = await api().post('/store/list/b-l/pop').send({ count: 2, encoding: 'base64' }).expect(200);
    expect(popped.body.values).toEqual(values.slice(0, 2).map(b64));
  });

  test('when sorted set members are any bytes, then add and the page read round-trip them with their scores', async () => {
    const member = allBytes();
    await api()
      .post('/store/zset/b-z')
      .send({ members: { [b64(member)]: 2, [b64(NOT_UTF8)]: 1 }, encoding: 'base64' })
      .expect(201);
    const res = await api().get('/store/zset/b-z?encoding=base64').expect(200);
    expect(res.body.members).toEqual([
      { member: b64(NOT_UTF8), score: 1 },
      { member: b64(member), score: 2 },
    ]);
    expect((await api().get('/store/zset/b-z').expect(422)).body.error).toBe('binary_value');
  });
});

test('when a waiting pop in base64 gets bytes pushed meanwhile, then it answers them in base64', async () => {
  const bytes = allBytes();
  const waiting = new Promise<request.Response>((resolve, reject) =>
    api().post('/store/list/b-wait/pop').send({ wait: 20, encoding: 'base64' }).then(resolve, reject),
  );
  const waiters = t.context.store.waiters as { waiting: number };
  const end = Date.now() + 20_000;
  while (waiters.waiting === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  await api()
    .post('/store/list/b-wait/push')
    .send({ values: [b64(bytes)], encoding: 'base64' })
    .expect(201);
  expect((await waiting).body.values).toEqual([b64(bytes)]);
});

describe('batches', () => {
  test('when a batch says base64, then its items write and read bytes; an item may say text for itself', async () => {
    const bytes = allBytes();
    const res = await api()
      .post('/store/string/batch')
      .send({
        encoding: 'base64',
        operations: [
          { type: 'set', key: 'b-b1', value: b64(bytes) },
          { type: 'get', key: 'b-b1' },
          { type: 'set', key: 'b-b2', value: 'plain text', encoding: 'text' },
          { type: 'get', key: 'b-b2', encoding: 'text' },
          { type: 'incr', key: 'b-b3' },
        ],
      })
      .expect(200);
    const [, read, , text, counter] = res.body.results;
    expect(read.value).toBe(b64(bytes));
    expect(text.value).toBe('plain text');
    expect(counter.value).toBe(1);
    expect((await t.raw.getBuffer(raw('b-b1')))?.equals(bytes)).toBe(true);
  });

  test('when hash, set, list and sorted set batches say base64, then every item round-trips bytes', async () => {
    const [a, b] = [allBytes(), NOT_UTF8];
    const batch = (family: string, operations: object[]) =>
      api().post(`/store/${family}/batch`).send({ encoding: 'base64', operations }).expect(200);
    const hash = await batch('hash', [
      { type: 'set', key: 'b-bh2', fields: { [b64(a)]: b64(b) } },
      { type: 'setField', key: 'b-bh2', field: b64(b), value: b64(a) },
      { type: 'getField', key: 'b-bh2', field: b64(a) },
      { type: 'get', key: 'b-bh2' },
    ]);
    expect(hash.body.results[2].value).toBe(b64(b));
    expect(hash.body.results[3].fields).toEqual({ [b64(a)]: b64(b), [b64(b)]: b64(a) });
    const set = await batch('set', [
      { type: 'add', key: 'b-bs2', members: [b64(a)] },
      { type: 'addMember', key: 'b-bs2', member: b64(b) },
      { type: 'get', key: 'b-bs2' },
    ]);
    expect([...set.body.results[2].members].sort()).toEqual([b64(a), b64(b)].sort());
    const list = await batch('list', [
      { type: 'push', key: 'b-bl2', values: [b64(a), b64(b)] },
      { type: 'range', key: 'b-bl2' },
    ]);
    expect(list.body.results[1].values).toEqual([b64(a), b64(b)]);
    const zset = await batch('zset', [
      { type: 'add', key: 'b-bz2', members: { [b64(a)]: 1 } },
      { type: 'get', key: 'b-bz2' },
    ]);
    expect(zset.body.results[1].members).toEqual([{ member: b64(a), score: 1 }]);
    expect(
      (await t.raw.lrangeBuffer(raw('b-bl2').toString(), 0, -1)).map((x) => x.equals(a) || x.equals(b)),
    ).toEqual([true, true]);
  });

  test('when a batch reads a value that is not UTF-8 without base64, then that item fails with binary_value', async () => {
    await t.raw.hset(raw('b-bh'), 'f', NOT_UTF8);
    const res = await api()
      .post('/store/hash/batch')
      .send({
        operations: [
          { type: 'getField', key: 'b-bh', field: 'f' },
          { type: 'exists', key: 'b-bh' },
        ],
      })
      .expect(200);
    expect(res.body.results[0].error.error).toBe('binary_value');
    expect(res.body.results[1].exists).toBe(true);
  });
});
