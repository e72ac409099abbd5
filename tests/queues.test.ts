// Queues: create / configure / list / delete, send (batches, delays, dedup), receive with leases, ack / nack /
// extend by receipt, backoff, dead letters, peek, redrive, purge.
import request from 'supertest';
import { createKeyspace } from '../src/redis/keys';
import { type TestApp, testApp } from './support/app';
import { until } from './support/until';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('queues');
});
afterAll(() => t.close());

const api = () => request(t.data);
const json = { 'Content-Type': 'application/json' };
const put = (q: string, body: object = {}) => api().put(`/store/queues/${q}`).set(json).send(body);
const post = (q: string, what: string, body: object = {}) =>
  api().post(`/store/queues/${q}/${what}`).set(json).send(body);
const stats = async (q: string) => (await api().get(`/store/queues/${q}`)).body.stats;
const receive = async (q: string, body: object = {}) => {
  const res = await post(q, 'receive', body);
  expect(res.status).toBe(200);
  return res.body.messages as { id: string; receipt: string; body: string; delivery_count: number }[];
};

test('when a queue is created, changed, listed and deleted, then each answer says so', async () => {
  const created = await put('q-life', { visibility_timeout: 10, backoff: { type: 'fixed', delay: 2 } });
  expect(created.status).toBe(201);
  expect(created.body.settings).toMatchObject({
    visibility_timeout: 10,
    max_deliveries: 5,
    backoff: { type: 'fixed', delay: 2 },
  });
  const changed = await put('q-life', { max_deliveries: 2 });
  expect(changed.status).toBe(200);
  expect(changed.body.settings).toMatchObject({ visibility_timeout: 10, max_deliveries: 2 });
  expect((await api().get('/store/queues?prefix=q-li')).body.queues).toEqual(['q-life']);
  expect((await api().delete('/store/queues/q-life')).body).toEqual({ queue: 'q-life', deleted: true });
  expect((await api().delete('/store/queues/q-life')).body.deleted).toBe(false);
  expect((await api().get('/store/queues/q-life')).status).toBe(404);
  expect((await post('q-life', 'messages', { body: 'x' })).status).toBe(404);
});

test('when settings are invalid, then 400 and nothing is created', async () => {
  expect((await put('q-bad', { backoff: { type: 'fixed' } })).status).toBe(400);
  expect((await put('q-bad', { max_deliveries: 0 })).status).toBe(400);
  expect((await put('bad name!')).status).toBe(400);
  expect((await api().get('/store/queues/q-bad')).status).toBe(404);
});

test('when messages are sent, received and acked, then each is delivered once and the counts follow', async () => {
  await put('q-basic');
  const sent = await post('q-basic', 'messages', {
    messages: [
      { body: 'one', attributes: { kind: 'a' } },
      { body: 'AAEC', encoding: 'base64' },
    ],
  });
  expect(sent.status).toBe(201);
  expect(sent.body.messages).toHaveLength(2);
  expect(await stats('q-basic')).toMatchObject({ ready: 2, in_flight: 0, dead: 0 });
  const got = await receive('q-basic', { max_messages: 10 });
  expect(got.map((m) => m.body)).toEqual(['one', 'AAEC']);
  expect(got[0]).toMatchObject({ delivery_count: 1, attributes: { kind: 'a' }, encoding: 'text' });
  expect(await stats('q-basic')).toMatchObject({ ready: 0, in_flight: 2 });
  expect(await receive('q-basic')).toEqual([]);
  const acked = await post('q-basic', 'ack', { receipts: [...got.map((m) => m.receipt), 'bm9wZQ'] });
  expect(acked.body.results.map((r: { status: string }) => r.status)).toEqual(['acked', 'acked', 'unknown']);
  const again = await post('q-basic', 'ack', { receipts: [got[0]?.receipt] });
  expect(again.body.results[0].status).toBe('unknown');
  expect(await stats('q-basic')).toMatchObject({ ready: 0, in_flight: 0 });
});

test('when a lease runs out, then the message is delivered again and the older receipt is stale', async () => {
  await put('q-lease');
  await post('q-lease', 'messages', { body: 'job' });
  const [first] = await receive('q-lease', { visibility_timeout: 0.05 });
  const second = await until(async () => (await receive('q-lease'))[0]);
  expect(second.id).toBe(first?.id);
  expect(second.delivery_count).toBe(2);
  const res = await post('q-lease', 'ack', { receipts: [first?.receipt, second.receipt] });
  expect(res.body.results.map((r: { status: string }) => r.status)).toEqual(['stale', 'acked']);
});

test('when a lease is extended, then the message is not delivered again meanwhile', async () => {
  await put('q-extend', { visibility_timeout: 60 });
  await post('q-extend', 'messages', { body: 'job' });
  const [m] = await receive('q-extend');
  const res = await post('q-extend', 'extend', { receipts: [m?.receipt], visibility_timeout: 120 });
  expect(res.body.results[0]).toMatchObject({ status: 'extended' });
  expect(await receive('q-extend')).toEqual([]);
});

test('when a message is nacked past max_deliveries, then it is a dead letter with its last error, and redrive brings it back', async () => {
  await put('q-dead', { max_deliveries: 2, backoff: { type: 'schedule', delays: [0] } });
  await post('q-dead', 'messages', { body: 'poison' });
  const [a] = await receive('q-dead');
  expect(
    (await post('q-dead', 'nack', { receipts: [a?.receipt], error: 'boom 1' })).body.results[0].status,
  ).toBe('retrying');
  const b = await until(async () => (await receive('q-dead'))[0]);
  const res = await post('q-dead', 'nack', { receipts: [b.receipt], error: 'boom 2' });
  expect(res.body.results[0].status).toBe('dead');
  expect(await stats('q-dead')).toMatchObject({ ready: 0, in_flight: 0, delayed: 0, dead: 1 });
  const dead = (await api().get('/store/queues/q-dead/messages?state=dead')).body.messages;
  expect(dead[0]).toMatchObject({ body: 'poison', last_error: 'boom 2', delivery_count: 2 });
  expect((await post('q-dead', 'redrive')).body.redriven).toBe(1);
  const c = await receive('q-dead');
  expect(c[0]).toMatchObject({ body: 'poison', delivery_count: 1 });
});

test('when a nack gives a delay, then the message waits in delayed until then', async () => {
  await put('q-nack', { visibility_timeout: 60 });
  await post('q-nack', 'messages', { body: 'later' });
  const [m] = await receive('q-nack');
  const res = await post('q-nack', 'nack', { receipts: [m?.receipt], delay: 3600 });
  expect(res.body.results[0]).toMatchObject({ status: 'retrying' });
  expect(await stats('q-nack')).toMatchObject({ delayed: 1, in_flight: 0 });
  expect((await api().get('/store/queues/q-nack/messages?state=delayed')).body.messages[0].body).toBe(
    'later',
  );
});

test('when a message is sent with a delay, then it is delivered only after it, and a delay past max_delay sends nothing', async () => {
  await put('q-delay', { max_delay: 100 });
  const refused = await post('q-delay', 'messages', {
    messages: [{ body: 'ok' }, { body: 'far', delay: 101 }],
  });
  expect(refused.status).toBe(400);
  expect(refused.body.details.index).toBe(1);
  expect(await stats('q-delay')).toMatchObject({ ready: 0, delayed: 0 });
  await post('q-delay', 'messages', { body: 'soon', delay: 0.2 });
  expect(await stats('q-delay')).toMatchObject({ delayed: 1 });
  const m = await until(async () => (await receive('q-delay'))[0]);
  expect(m.body).toBe('soon');
});

test('when a dedup_id repeats within the window, then the duplicate is not sent', async () => {
  await put('q-dedup');
  const first = await post('q-dedup', 'messages', { body: 'a', dedup_id: 'd1' });
  const second = await post('q-dedup', 'messages', { body: 'a', dedup_id: 'd1' });
  expect(second.body).toEqual({ id: first.body.id, duplicate: true });
  expect(await stats('q-dedup')).toMatchObject({ ready: 1 });
});

test('when a send is retried with its Idempotency-Key, then the retry is replayed and sends nothing', async () => {
  await put('q-idem');
  const send = () => post('q-idem', 'messages', { body: 'a' }).set('Idempotency-Key', 'send-1');
  const first = await send();
  const retry = await send();
  expect(retry.body).toEqual(first.body);
  expect(retry.headers['idempotent-replayed']).toBe('true');
  expect(await stats('q-idem')).toMatchObject({ ready: 1 });
});

test("when a group's messages are sent, then they are delivered in order, one in flight at a time", async () => {
  await put('q-group');
  await post('q-group', 'messages', {
    messages: [1, 2, 3].map((n) => ({ body: `g${n}`, group: 'g' })).concat([{ body: 'free' }] as never),
  });
  expect(await stats('q-group')).toMatchObject({ ready: 2, waiting: 2 });
  const got = await receive('q-group', { max_messages: 10 });
  expect(got.map((m) => m.body).sort()).toEqual(['free', 'g1']);
  expect(await receive('q-group')).toEqual([]);
  const order: string[] = [];
  let current = got.find((m) => m.body === 'g1');
  while (current) {
    order.push(current.body);
    await post('q-group', 'ack', { receipts: [current.receipt] });
    current = (await receive('q-group', { max_messages: 10 }))[0];
  }
  expect(order).toEqual(['g1', 'g2', 'g3']);
});

test('when a receive waits on an empty queue and a message is sent, then the waiting receive answers it', async () => {
  await put('q-poll');
  const waiting = new Promise<request.Response>((resolve, reject) =>
    post('q-poll', 'receive', { wait: 20 }).then(resolve, reject),
  );
  await until(async () => (t.context.store.waiters as { waiting: number }).waiting === 1);
  await post('q-poll', 'messages', { body: 'wake' });
  const res = await waiting;
  expect(res.body.messages[0].body).toBe('wake');
});

test('when a wait is longer than SVC_QUEUE_MAX_WAIT, then 400', async () => {
  await put('q-wait');
  expect((await post('q-wait', 'receive', { wait: 21 })).status).toBe(400);
});

test('when messages are peeked, then nothing changes, and purge removes them', async () => {
  await put('q-peek');
  await post('q-peek', 'messages', { messages: [{ body: 'a' }, { body: 'b' }] });
  const peeked = (await api().get('/store/queues/q-peek/messages?state=ready&limit=1')).body.messages;
  expect(peeked.map((m: { body: string }) => m.body)).toEqual(['a']);
  expect(await stats('q-peek')).toMatchObject({ ready: 2, in_flight: 0 });
  expect((await post('q-peek', 'purge')).body.purged).toBe(2);
  expect(await stats('q-peek')).toMatchObject({ ready: 0 });
  expect(await receive('q-peek')).toEqual([]);
});

test('when not_before names a time that does not exist, or a lease is 0, then 400 and nothing changes', async () => {
  await put('q-times');
  expect((await post('q-times', 'messages', { body: 'x', not_before: '2025-13-45T10:00:00Z' })).status).toBe(
    400,
  );
  expect((await put('q-times', { visibility_timeout: 0 })).status).toBe(400);
  expect(await stats('q-times')).toMatchObject({ ready: 0, delayed: 0 });
  await post('q-times', 'messages', {
    body: 'at',
    not_before: new Date(Date.now() + 3_600_000).toISOString(),
  });
  expect(await stats('q-times')).toMatchObject({ delayed: 1 });
});

test('when another client trims the stream under an in-flight message, then it is delivered again after its lease, not lost', async () => {
  await put('q-trim');
  await post('q-trim', 'messages', { body: 'kept' });
  const [first] = await receive('q-trim', { visibility_timeout: 0.05 });
  expect(await t.raw.xtrim(createKeyspace(t.prefix).queueStream('q-trim'), 'MAXLEN', 0)).toBe(1);
  const again = await until(async () => (await receive('q-trim'))[0]);
  expect(again).toMatchObject({ id: first?.id, body: 'kept' });
  expect((await post('q-trim', 'ack', { receipts: [again.receipt] })).body.results[0].status).toBe('acked');
  expect(await stats('q-trim')).toMatchObject({ ready: 0, in_flight: 0 });
});

test('when an ack or a purge is retried with its Idempotency-Key, then the first answer is replayed; a receive refuses one', async () => {
  await put('q-idem-more');
  await post('q-idem-more', 'messages', { messages: [{ body: 'a' }, { body: 'b' }] });
  const [m] = await receive('q-idem-more');
  const ack = () => post('q-idem-more', 'ack', { receipts: [m?.receipt] }).set('Idempotency-Key', 'ack-1');
  expect((await ack()).body.results[0].status).toBe('acked');
  const again = await ack();
  expect([again.body.results[0].status, again.headers['idempotent-replayed']]).toEqual(['acked', 'true']);
  const purge = () => post('q-idem-more', 'purge').set('Idempotency-Key', 'purge-1');
  expect((await purge()).body.purged).toBe(1);
  expect((await purge()).body.purged).toBe(1);
  const refused = await post('q-idem-more', 'receive').set('Idempotency-Key', 'r-1');
  expect([refused.status, refused.body.error]).toEqual([400, 'invalid_request']);
});
