// Idempotency-Key on writes: a retry is answered from the record and applies nothing, across a restart too.
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { WaiterPool } from '../src/redis/waiters';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('idempotency', { SVC_CHANGES_ENABLED: 'true' });
});
afterAll(async () => {
  const records = await t.raw.keys('#svc:idem:*');
  if (records.length > 0) await t.raw.del(...records);
  await t.close();
});

const api = () => request(t.data);
const raw = (key: string) => `${t.prefix}${key}`;
const newKey = () => randomUUID();

/** Polls until `check` holds; fails after `ms` (generous: the machine is shared), never races real time. */
async function until(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a retried write', () => {
  test('when an increment is retried with the same key, then it applies once and the retry replays its answer', async () => {
    const key = newKey();
    const first = await api().post('/store/string/idem-c/incr').set('Idempotency-Key', key).send({ by: 5 });
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const retry = await api().post('/store/string/idem-c/incr').set('Idempotency-Key', key).send({ by: 5 });
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.headers.etag).toBe(first.headers.etag);
    expect(await t.raw.get(raw('idem-c'))).toBe('5');
  });

  test('when a push is retried, then the list holds its items once and the feed has one event', async () => {
    const key = newKey();
    const before = await t.raw.xlen(t.context.keyspace.changes);
    const push = () =>
      api()
        .post('/store/list/idem-l/push')
        .set('Idempotency-Key', `"${key}"`)
        .send({ values: ['a', 'b'] });
    const first = await push();
    const retry = await push();
    expect(retry.status).toBe(first.status);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(await t.raw.lrange(raw('idem-l'), 0, -1)).toEqual(['a', 'b']);
    expect(await t.raw.xlen(t.context.keyspace.changes)).toBe(before + 1);
  });

  test('when the first answer was an error, then the retry replays the same error', async () => {
    await t.raw.sadd(raw('idem-set'), 'm');
    const key = newKey();
    const first = await api().post('/store/string/idem-set').set('Idempotency-Key', key).send({ value: 'v' });
    expect(first.status).toBe(409);
    await t.raw.del(raw('idem-set'));
    const retry = await api().post('/store/string/idem-set').set('Idempotency-Key', key).send({ value: 'v' });
    expect(retry.status).toBe(409);
    expect(retry.body.error).toBe('wrong_type');
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(await t.raw.exists(raw('idem-set'))).toBe(0);
  });

  test('when the same key comes with another request, then 422 idempotency_key_mismatch and nothing is written', async () => {
    const key = newKey();
    await api().post('/store/string/idem-m').set('Idempotency-Key', key).send({ value: 'one' }).expect(201);
    const other = await api().post('/store/string/idem-m').set('Idempotency-Key', key).send({ value: 'two' });
    expect(other.status).toBe(422);
    expect(other.body.error).toBe('idempotency_key_mismatch');
    expect(await t.raw.get(raw('idem-m'))).toBe('one');
  });

  test('when the key is not a visible ASCII string, then 400 invalid_request', async () => {
    const res = await api().post('/store/string/idem-bad').set('Idempotency-Key', 'a b').send({ value: 'v' });
    expect(res.status).toBe(400);
    expect(await t.raw.exists(raw('idem-bad'))).toBe(0);
  });

  test('when a batch is retried, then its items apply once and the results are the same', async () => {
    const key = newKey();
    const body = {
      operations: [
        { type: 'set', key: 'idem-b1', value: 'x' },
        { type: 'incr', key: 'idem-b2', by: 2 },
        { type: 'get', key: 'idem-b1' },
      ],
    };
    const first = await api().post('/store/string/batch').set('Idempotency-Key', key).send(body);
    expect(first.status).toBe(200);
    const retry = await api().post('/store/string/batch').set('Idempotency-Key', key).send(body);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(await t.raw.get(raw('idem-b2'))).toBe('2');
  });

  test('when a DELETE of any key is retried after the key was written again, then the replay deletes nothing', async () => {
    const key = newKey();
    await t.raw.set(raw('idem-d'), 'x');
    const first = await api().delete('/store/keys/idem-d').set('Idempotency-Key', key).expect(200);
    expect(first.body.deleted).toBe(true);
    await t.raw.set(raw('idem-d'), 'y');
    const retry = await api().delete('/store/keys/idem-d').set('Idempotency-Key', key).expect(200);
    expect(retry.body).toEqual(first.body);
    expect(await t.raw.get(raw('idem-d'))).toBe('y');
  });

  test('when the service restarts between the write and its retry, then the new app replays the answer', async () => {
    const key = newKey();
    const first = await api()
      .post('/store/hash/idem-h/field/n/incr')
      .set('Idempotency-Key', key)
      .send({ by: 3 });
    const again = await testApp('idempotency', { SVC_KEY_PREFIX: t.prefix });
    try {
      const retry = await request(again.data)
        .post('/store/hash/idem-h/field/n/incr')
        .set('Idempotency-Key', key)
        .send({ by: 3 });
      expect(retry.status).toBe(first.status);
      expect(retry.body).toEqual(first.body);
      expect(retry.headers['idempotent-replayed']).toBe('true');
    } finally {
      await again.close();
    }
    expect(await t.raw.hget(raw('idem-h'), 'n')).toBe('3');
  });

  test('when a write has a key, then its record is an internal #svc:idem: key, outside every user prefix', async () => {
    const key = newKey();
    await api().post('/store/string/idem-s/incr').set('Idempotency-Key', key).send({}).expect(201);
    const record = await t.raw.keys('#svc:idem:*');
    expect(record.length).toBeGreaterThan(0);
    expect(await t.raw.get(raw('idem-s'))).toBe('1');
  });
});

describe('a duplicate while the first is in flight', () => {
  test('when a waiting pop holds the key, then a duplicate is 409 with Retry-After; after it, the replay', async () => {
    const key = newKey();
    const pop = () => api().post('/store/list/idem-q/pop').set('Idempotency-Key', key).send({ wait: 20 });
    const waiters = t.context.store.waiters as WaiterPool;
    const first = new Promise<request.Response>((resolve, reject) => pop().then(resolve, reject));
    await until(() => waiters.waiting === 1);
    const duplicate = await pop();
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error).toBe('idempotency_key_in_use');
    expect(Number(duplicate.headers['retry-after'])).toBeGreaterThan(0);
    await api()
      .post('/store/list/idem-q/push')
      .send({ values: ['job'] })
      .expect(201);
    const answered = await first;
    expect(answered.status).toBe(200);
    expect(answered.body.values).toEqual(['job']);
    const retry = await pop();
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual(answered.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
  });
});
