// Locks behind Sentinel with SVC_REDIS_WAIT_REPLICAS=1: a failover under waiting contenders never hands out a
// fencing token twice, and each lock's successive grants have strictly increasing tokens.
import Redis from 'ioredis';
import { type SentinelSet, startSentinelSet } from './support/redis-sentinel';
import { LOOPBACK } from './support/redis-server';
import { type Served, served } from './support/served';
import { until } from './support/until';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const NAMES = ['job:a', 'job:b'];
let set: SentinelSet;
let s: Served;
beforeAll(async () => {
  set = await startSentinelSet();
  s = await served('locks-sentinel', {
    SVC_REDIS_SENTINELS: set.sentinels,
    SVC_REDIS_SENTINEL_NAME: set.name,
    SVC_REDIS_WAIT_REPLICAS: '1',
  });
}, 60_000);
let closed = false;
afterAll(async () => {
  if (!closed) await s?.close();
  await set?.stop();
}, 30_000);

/** Clients subscribed to something on the set's Sentinels (ioredis's failover detectors, the failover fence). */
async function sentinelSubscribers(): Promise<number> {
  let count = 0;
  for (const server of set.sentinelServers) {
    const client = new Redis(server.port, LOOPBACK);
    try {
      const list = (await client.call('CLIENT', 'LIST')) as string;
      count += list.split('\n').filter((line) => / (p?sub)=[1-9]/.test(line)).length;
    } finally {
      client.disconnect();
    }
  }
  return count;
}

const post = (path: string, body: object) =>
  fetch(`${s.base}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  }).then(
    async (res) => ({
      status: res.status,
      body: (await res.json().catch(() => ({}))) as Record<string, unknown>,
    }),
    () => ({ status: 0, body: {} as Record<string, unknown> }),
  );

/** Contender loops on NAMES: acquire (waiting up to 2 s), hold briefly, release; until stopped (60 s at most). */
function startContenders(count: number) {
  const grants: { name: string; fence: number; at: number }[] = [];
  const statuses = new Set<number>();
  let stopped = false;
  const deadline = Date.now() + 60_000;
  const loops = Array.from({ length: count }, async (_, w) => {
    const name = NAMES[w % NAMES.length] as string;
    while (!stopped && Date.now() < deadline) {
      const got = await post(`/store/locks/${name}/acquire`, { ttl_ms: 2000, wait_ms: 2000 });
      statuses.add(got.status);
      if (got.status !== 200) {
        await sleep(20);
        continue;
      }
      grants.push({ name, fence: got.body.fence as number, at: Date.now() });
      await sleep(5);
      statuses.add((await post(`/store/locks/${name}/release`, { token: got.body.token })).status);
    }
  });
  return {
    grants,
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
      return { grants, statuses };
    },
  };
}

test('when Sentinel fails over under 4 waiting contenders, then no fencing token is handed out twice and each lock’s grants increase', async () => {
  const contenders = startContenders(4);
  for (const until = Date.now() + 20_000; Date.now() < until && contenders.grants.length < 20; )
    await sleep(50);
  await set.failover();
  const switched = Date.now();
  for (const until = Date.now() + 30_000; Date.now() < until; await sleep(200))
    if (contenders.grants.filter((g) => g.at > switched).length >= 20) break;
  const { grants, statuses } = await contenders.stop();
  // 409: a wait that ended; 503: Redis unreachable during the switch; 409 lock_lost on release after it.
  expect([...statuses].filter((status) => ![200, 409, 503].includes(status))).toEqual([]);
  expect(grants.filter((g) => g.at > switched).length).toBeGreaterThanOrEqual(20);
  const fences = grants.map((g) => g.fence);
  expect(new Set(fences).size).toBe(fences.length);
  for (const name of NAMES) {
    // Successive grants of one lock, in the order they were answered: the holder released before the next.
    const mine = grants.filter((g) => g.name === name).map((g) => g.fence);
    expect(mine.filter((fence, i) => i > 0 && fence <= (mine[i - 1] as number))).toEqual([]);
  }
}, 120_000);

test('when the service closes, then none of its connections stays subscribed to a Sentinel (the process can exit)', async () => {
  expect(await sentinelSubscribers()).toBeGreaterThan(0);
  closed = true;
  await s.close();
  await until(async () => (await sentinelSubscribers()) === 0);
}, 30_000);
