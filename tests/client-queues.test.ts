// The TypeScript client's queues: send, receive, ack, and the `messages` iterator (ack on success, extend meanwhile).
import { createGateway, type Gateway } from '../clients/typescript/src/index';
import { type Served, served } from './support/served';

let s: Served;
let gw: Gateway;
beforeAll(async () => {
  s = await served('client-queues');
  gw = createGateway({ baseUrl: s.base });
});
afterAll(() => s.close());

test('when a queue is made and messages sent, then receive and ack work through the client', async () => {
  expect(await gw.queues.put('cq-basic', { visibility_timeout: 60 })).toBe(true);
  expect(await gw.queues.list('cq-')).toEqual(['cq-basic']);
  const [sent] = await gw.queues.send('cq-basic', 'hello');
  const [got] = await gw.queues.receive('cq-basic', { max: 5 });
  expect(got).toMatchObject({ id: sent?.id, body: 'hello', delivery_count: 1 });
  expect((await gw.queues.ack('cq-basic', [got?.receipt as string]))[0]?.status).toBe('acked');
  expect((await gw.queues.get('cq-basic')).stats).toMatchObject({ ready: 0, in_flight: 0 });
});

test('when the messages iterator runs a body longer than the lease, then the lease is extended and the message acked once', async () => {
  await gw.queues.put('cq-iter');
  await gw.queues.send('cq-iter', [{ body: 'slow' }, { body: 'fast' }]);
  const seen: string[] = [];
  const stop = new AbortController();
  for await (const m of gw.queues.messages('cq-iter', {
    visibilityTimeout: 0.4,
    wait: 1,
    signal: stop.signal,
  })) {
    seen.push(m.body);
    // Longer than two leases: only the extensions keep it from being delivered again meanwhile.
    if (m.body === 'slow') await new Promise((resolve) => setTimeout(resolve, 1000));
    if (seen.length === 2) stop.abort();
  }
  expect(seen).toEqual(['slow', 'fast']);
  expect((await gw.queues.get('cq-iter')).stats).toMatchObject({ ready: 0, in_flight: 0, dead: 0 });
});

test('when the loop body throws, then the message is given back with the error', async () => {
  await gw.queues.put('cq-throw', { backoff: { type: 'fixed', delay: 3600 } });
  await gw.queues.send('cq-throw', 'bad');
  await expect(
    (async () => {
      for await (const _ of gw.queues.messages('cq-throw', { wait: 1 })) throw new Error('handler failed');
    })(),
  ).rejects.toThrow('handler failed');
  const [delayed] = await gw.queues.peek('cq-throw', 'delayed');
  expect(delayed).toMatchObject({ body: 'bad', last_error: 'the consumer stopped' });
});
