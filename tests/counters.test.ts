// Counters end to end: POST /store/string/{key}/incr and /store/hash/{key}/field/{field}/incr against a real Redis.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { expectSchema } from './support/schemas';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('counters');
});
afterAll(() => t.close());

const api = () => request(t.data);
const raw = (key: string) => `${t.prefix}${key}`;
const incr = (key: string, body?: object) => {
  const req = api().post(`/store/string/${key}/incr`).set('Content-Type', 'application/json');
  return body === undefined ? req : req.send(body);
};
const incrField = (key: string, field: string, body?: object) => {
  const req = api()
    .post(`/store/hash/${key}/field/${encodeURIComponent(field)}/incr`)
    .set('Content-Type', 'application/json');
  return body === undefined ? req : req.send(body);
};

describe('a string counter', () => {
  test('when the key is missing, then it starts at 0: 201 with 1, then 200 with 2', async () => {
    const first = await incr('c-new');
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ success: true, key: 'c-new', value: 1, value_string: '1', ttl: -1 });
    expectSchema('CounterResponse', first.body);
    const second = await incr('c-new', {});
    expect(second.status).toBe(200);
    expect(second.body.value).toBe(2);
    expect(await t.raw.get(raw('c-new'))).toBe('2');
  });

  test('when by is negative or a fraction, then INCRBY or INCRBYFLOAT does the sum', async () => {
    await t.raw.set(raw('c-by'), '10');
    expect((await incr('c-by', { by: -15 })).body.value).toBe(-5);
    const float = await incr('c-by', { by: 2.5 });
    expect(float.body).toMatchObject({ value: -2.5, value_string: '-2.5' });
    expect(await t.raw.get(raw('c-by'))).toBe('-2.5');
  });

  test('when ttl is given and the call creates the key, then the key expires after it', async () => {
    const res = await incr('c-window', { ttl: 60 });
    expect(res.status).toBe(201);
    expect(res.body.ttl).toBe(60);
    expect(await t.raw.ttl(raw('c-window'))).toBe(60);
  });

  test('when ttl is given and the key exists, then its expiry (or the lack of one) is kept', async () => {
    await t.raw.set(raw('c-expiring'), '5', 'EX', 500);
    const res = await incr('c-expiring', { ttl: 60 });
    expect(res.status).toBe(200);
    expect(res.body.value).toBe(6);
    expect(await t.raw.ttl(raw('c-expiring'))).toBeGreaterThan(400);
    await t.raw.set(raw('c-persistent'), '5');
    await incr('c-persistent', { ttl: 60 });
    expect(await t.raw.ttl(raw('c-persistent'))).toBe(-1);
  });

  test('when the value goes beyond 2^53, then value_string is exact and value is null', async () => {
    await t.raw.set(raw('c-big'), '9007199254740992');
    const res = await incr('c-big');
    expect(res.body).toMatchObject({ value: null, value_string: '9007199254740993' });
    expectSchema('CounterResponse', res.body);
    await t.raw.set(raw('c-max'), '9223372036854775806');
    expect((await incr('c-max')).body.value_string).toBe('9223372036854775807');
    expect(await t.raw.get(raw('c-max'))).toBe('9223372036854775807');
  });

  test('when the result would overflow 64 bits, then 422 not_a_number and nothing changes', async () => {
    await t.raw.set(raw('c-overflow'), '9223372036854775807');
    const res = await incr('c-overflow');
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('not_a_number');
    expect(await t.raw.get(raw('c-overflow'))).toBe('9223372036854775807');
  });

  test.each([
    ['holds "abc"', 'abc', {}],
    ['holds "abc" and by is a fraction', 'abc', { by: 0.5 }],
    ['holds "1.5" and by is an integer', '1.5', { by: 1 }],
  ])('when the value %s, then 422 not_a_number naming the key', async (_what, stored, body) => {
    await t.raw.set(raw('c-nan'), stored);
    const res = await incr('c-nan', body);
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('not_a_number');
    expect(res.body.message).toMatch(/c-nan/);
    expect(await t.raw.get(raw('c-nan'))).toBe(stored);
  });

  test('when the key holds a hash, then 409 wrong_type', async () => {
    await t.raw.hset(raw('c-hash'), 'f', '1');
    const res = await incr('c-hash');
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('wrong_type');
  });

  test.each([
    ['a string by', 'invalid_value', { by: '1' }],
    ['a by beyond 2^53', 'invalid_value', { by: 2 ** 53 }],
    ['a zero ttl', 'invalid_ttl', { ttl: 0 }],
    ['an unknown property', 'invalid_request', { step: 1 }],
  ])('when the body has %s, then 400 %s', async (_what, error, body) => {
    const res = await incr('c-invalid', body);
    expect([res.status, res.body.error]).toEqual([400, error]);
  });

  test('when 200 increments run at once, then none is lost', async () => {
    await Promise.all(Array.from({ length: 200 }, () => incr('c-race')));
    expect(await t.raw.get(raw('c-race'))).toBe('200');
  });
});

describe('a hash field counter', () => {
  test('when the field is missing, then 201 from 0; when it exists, then 200', async () => {
    await t.raw.hset(raw('h-views'), 'other', 'x');
    const first = await incrField('h-views', 'home', { by: 5 });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ success: true, field: 'home', value: 5, value_string: '5', ttl: -1 });
    expectSchema('FieldCounterResponse', first.body);
    const second = await incrField('h-views', 'home');
    expect([second.status, second.body.value]).toEqual([200, 6]);
    expect(await t.raw.hget(raw('h-views'), 'home')).toBe('6');
  });

  test('when ttl is given, then only the call that creates the hash sets it', async () => {
    expect((await incrField('h-window', 'a', { ttl: 60 })).body.ttl).toBe(60);
    await t.raw.expire(raw('h-window'), 500);
    const res = await incrField('h-window', 'b', { ttl: 60 });
    expect(res.status).toBe(201);
    expect(await t.raw.ttl(raw('h-window'))).toBeGreaterThan(400);
  });

  test('when the field goes beyond 2^53 or holds a fraction, then the value is exact', async () => {
    await t.raw.hset(raw('h-big'), 'n', '9007199254740992', 'f', '1.25');
    expect((await incrField('h-big', 'n')).body).toMatchObject({
      value: null,
      value_string: '9007199254740993',
    });
    expect((await incrField('h-big', 'f', { by: 0.5 })).body).toMatchObject({
      value: 1.75,
      value_string: '1.75',
    });
  });

  test('when the field holds "abc", then 422 not_a_number naming field and key', async () => {
    await t.raw.hset(raw('h-nan'), 'name', 'abc');
    const res = await incrField('h-nan', 'name');
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('not_a_number');
    expect(res.body.message).toMatch(/name.*h-nan/);
  });

  test('when the key holds a string, then 409 wrong_type', async () => {
    await t.raw.set(raw('h-string'), '1');
    expect((await incrField('h-string', 'f')).status).toBe(409);
  });

  test('when the field name is __proto__, then it is counted like any other', async () => {
    await incrField('h-proto', '__proto__', { by: 3 });
    expect(await t.raw.hget(raw('h-proto'), '__proto__')).toBe('3');
  });

  test('when 200 increments run at once, then none is lost', async () => {
    await Promise.all(Array.from({ length: 200 }, () => incrField('h-race', 'n')));
    expect(await t.raw.hget(raw('h-race'), 'n')).toBe('200');
  });
});

describe('incr batch items', () => {
  test('when a string batch increments, then each item answers like the endpoint', async () => {
    await t.raw.set(raw('b-nan'), 'abc');
    const res = await api()
      .post('/store/string/batch')
      .send({
        operations: [
          { type: 'incr', key: 'b-count', ttl: 30 },
          { type: 'incr', key: 'b-count', by: 4, ttl: 99 },
          { type: 'incr', key: 'b-nan' },
        ],
      });
    expect(res.status).toBe(200);
    expectSchema('StringBatchResponse', res.body);
    expect(res.body.results).toEqual([
      { type: 'incr', success: true, key: 'b-count', value: 1, value_string: '1', ttl: 30 },
      { type: 'incr', success: true, key: 'b-count', value: 5, value_string: '5', ttl: 30 },
      {
        type: 'incr',
        success: false,
        error: expect.objectContaining({ error: 'not_a_number', status: 422 }),
      },
    ]);
  });

  test('when a hash batch increments fields, then 201-like and 200-like items answer in order', async () => {
    const res = await api()
      .post('/store/hash/batch')
      .send({
        operations: [
          { type: 'incr', key: 'b-hash', field: 'a', by: 2 },
          { type: 'incr', key: 'b-hash', field: 'a', by: -0.5 },
          { type: 'getField', key: 'b-hash', field: 'a' },
        ],
      });
    expect(res.status).toBe(200);
    expectSchema('HashBatchResponse', res.body);
    expect(res.body.results).toEqual([
      { type: 'incr', success: true, field: 'a', value: 2, value_string: '2', ttl: -1 },
      { type: 'incr', success: true, field: 'a', value: 1.5, value_string: '1.5', ttl: -1 },
      { type: 'getField', success: true, field: 'a', value: '1.5', ttl: -1 },
    ]);
  });

  test('when an incr item has a bad by, then the whole batch is 400 with its index', async () => {
    const res = await api()
      .post('/store/string/batch')
      .send({
        operations: [
          { type: 'incr', key: 'x' },
          { type: 'incr', key: 'x', by: 'one' },
        ],
      });
    expect([res.status, res.body.error, res.body.details.index]).toEqual([400, 'invalid_value', 1]);
  });
});
