// Queues on a Redis Cluster: queues on different masters, each queue's keys in one slot, the change feed on.
import calculateSlot from 'cluster-key-slot';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { type RedisCluster, startRedisCluster } from './support/redis-cluster';

let cluster: RedisCluster;
let t: TestApp;
beforeAll(async () => {
  cluster = await startRedisCluster();
  t = await testApp('queue-cluster', { SVC_REDIS_CLUSTER_NODES: cluster.nodes, SVC_CHANGES_ENABLED: 'true' });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await cluster?.stop();
});

const api = () => request(t.data);
const json = { 'Content-Type': 'application/json' };
const post = (q: string, what: string, body: object = {}) =>
  api().post(`/store/queues/${q}/${what}`).set(json).send(body);

/** One queue name per master (three masters split the slots in equal ranges). */
function namesOnEveryMaster(): string[] {
  const byMaster = new Map<number, string>();
  for (let i = 0; byMaster.size < 3; i++) {
    const name = `q${i}`;
    const master = Math.floor(calculateSlot(t.context.keyspace.queue(name)) / Math.ceil(16384 / 3));
    if (!byMaster.has(master)) byMaster.set(master, name);
  }
  return [...byMaster.values()];
}

test('when queues live on different masters, then send, receive (long poll too), ack and list work on each', async () => {
  const names = namesOnEveryMaster();
  for (const q of names) {
    expect((await api().put(`/store/queues/${q}`).set(json).send({})).status).toBe(201);
    await post(q, 'messages', {
      messages: [
        { body: `${q}-1`, group: 'g' },
        { body: `${q}-2`, group: 'g' },
      ],
    });
    const [first] = (await post(q, 'receive', { max_messages: 5 })).body.messages;
    expect(first.body).toBe(`${q}-1`);
    const waiting = post(q, 'receive', { wait: 10 }).then((r) => r);
    expect((await post(q, 'ack', { receipts: [first.receipt] })).body.results[0].status).toBe('acked');
    const second = (await waiting).body.messages[0];
    expect(second.body).toBe(`${q}-2`);
    await post(q, 'ack', { receipts: [second.receipt] });
    expect((await api().get(`/store/queues/${q}`)).body.stats).toMatchObject({
      ready: 0,
      in_flight: 0,
      waiting: 0,
    });
  }
  expect((await api().get('/store/queues')).body.queues).toEqual([...names].sort());
});

test('when a send is retried with its Idempotency-Key on a Cluster, then the record sits in the queue slot and replays', async () => {
  const [q] = namesOnEveryMaster() as [string];
  const send = () => post(q, 'messages', { body: 'once' }).set('Idempotency-Key', 'cluster-send');
  const first = await send();
  const again = await send();
  expect([again.status, again.body, again.headers['idempotent-replayed']]).toEqual([201, first.body, 'true']);
});
