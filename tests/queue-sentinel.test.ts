// Queues behind Sentinel with SVC_REDIS_WAIT_REPLICAS=1: a failover under senders loses no send answered 201.
import Redis from 'ioredis';
import { createKeyspace } from '../src/redis/keys';
import { type SentinelSet, startSentinelSet } from './support/redis-sentinel';
import { LOOPBACK } from './support/redis-server';
import { type Served, served } from './support/served';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let set: SentinelSet;
let s: Served;
beforeAll(async () => {
  set = await startSentinelSet();
  s = await served('queue-sentinel', {
    SVC_REDIS_SENTINELS: set.sentinels,
    SVC_REDIS_SENTINEL_NAME: set.name,
    SVC_REDIS_WAIT_REPLICAS: '1',
  });
}, 60_000);
afterAll(async () => {
  await s?.close();
  await set?.stop();
});

/** Sender loops, each sending its own bodies one after another until stopped (60 s at most). */
function startSenders(count: number) {
  const acknowledged: { body: string; at: number }[] = [];
  const statuses = new Set<number>();
  let stopped = false;
  const deadline = Date.now() + 60_000;
  const loops = Array.from({ length: count }, async (_, w) => {
    for (let n = 0; !stopped && Date.now() < deadline; n++) {
      const body = `w${w}-${n}`;
      const at = Date.now();
      const status = await fetch(`${s.base}/store/queues/jobs/messages`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ body }),
        signal: AbortSignal.timeout(10_000),
      }).then(
        (res) => res.arrayBuffer().then(() => res.status),
        () => 0,
      );
      statuses.add(status);
      if (status === 201) acknowledged.push({ body, at });
      else await sleep(20);
    }
  });
  return {
    acknowledged,
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
      return { acknowledged, statuses };
    },
  };
}

test('when Sentinel fails over under 4 senders, then every send answered 201 is on the new master', async () => {
  expect(
    (
      await fetch(`${s.base}/store/queues/jobs`, {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json' },
        body: '{}',
      })
    ).status,
  ).toBe(201);
  const senders = startSenders(4);
  await sleep(1000);
  const next = await set.failover();
  const switched = Date.now();
  for (const until = Date.now() + 20_000; Date.now() < until; await sleep(200))
    if (senders.acknowledged.filter((a) => a.at > switched).length >= 20) break;
  const { acknowledged, statuses } = await senders.stop();
  expect([...statuses].filter((status) => status !== 201 && status !== 503)).toEqual([]);
  expect(acknowledged.filter((a) => a.at > switched).length).toBeGreaterThanOrEqual(20);
  const client = new Redis(next.port, LOOPBACK);
  try {
    const records = await client.hvals(`${createKeyspace(s.t.prefix).queue('jobs')}:m`);
    const held = new Set(records.map((r) => (JSON.parse(r) as { b: string }).b));
    expect(acknowledged.filter((a) => !held.has(a.body))).toEqual([]);
  } finally {
    client.disconnect();
  }
}, 90_000);
