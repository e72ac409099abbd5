// The change feed behind Sentinel: the one reader follows a failover and goes on by id; on Cluster it is refused.
import type { AddressInfo } from 'node:net';
import { ConfigError, loadConfig } from '../src/config';
import { type Listener, listen } from '../src/http/server';
import { type TestApp, testApp } from './support/app';
import { sse } from './support/feed';
import { type SentinelSet, startSentinelSet } from './support/redis-sentinel';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('behind Sentinel with SVC_REDIS_WAIT_REPLICAS=1', () => {
  let set: SentinelSet;
  let t: TestApp;
  let listener: Listener;
  let base: string;

  beforeAll(async () => {
    set = await startSentinelSet();
    t = await testApp('feed-sentinel', {
      SVC_REDIS_SENTINELS: set.sentinels,
      SVC_REDIS_SENTINEL_NAME: set.name,
      SVC_REDIS_WAIT_REPLICAS: '1',
      SVC_CHANGES_ENABLED: 'true',
    });
    listener = await listen(t.data, t.context, 0, '127.0.0.1');
    base = `http://127.0.0.1:${(listener.server.address() as AddressInfo).port}`;
  }, 60_000);

  afterAll(async () => {
    await listener?.close(1000);
    await t?.close();
    await set?.stop();
  });

  /** Writes `key` until it is acknowledged (a 503 while the failover is under way is retried), for at most 30 s. */
  async function writeAcknowledged(key: string): Promise<void> {
    for (const until = Date.now() + 30_000; Date.now() < until; await sleep(200)) {
      const res = await fetch(`${base}/store/string/${key}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ value: 'v' }),
        signal: AbortSignal.timeout(10_000),
      }).catch(() => undefined);
      if (res && res.status < 300) return;
    }
    throw new Error(`${key} was not acknowledged within 30 s`);
  }

  test('when Sentinel fails over, then an open event stream goes on: every acknowledged write, in order, no event twice', async () => {
    // From the stream's end now: the writes below are in the backlog or live, whenever the subscription starts.
    const { next } = (await (await fetch(`${base}/store/changes`)).json()) as { next: string };
    const client = sse(base, `?since=${next}`);
    expect(await client.status).toBe(200);
    for (const key of ['before1', 'before2']) await writeAcknowledged(key);
    await client.waitFor(2);
    await set.failover();
    for (const key of ['after1', 'after2', 'after3']) await writeAcknowledged(key);
    try {
      await client.waitFor(5, 60_000);
      for (
        let i = 0;
        i < 100 && !client.messages.some((m) => (m.data as { key: string }).key === 'after3');
        i++
      )
        await sleep(100);
      const keys = client.messages.map((m) => (m.data as { key: string }).key);
      // A write answered 503 while replicas could not confirm it may have been applied, and its retry is another
      // write: each has its event. Every acknowledged one is there, in order, and no event came twice.
      expect([...new Set(keys)]).toEqual(['before1', 'before2', 'after1', 'after2', 'after3']);
      const ids = client.messages.map((m) => m.id);
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      client.close();
    }
  }, 120_000);
});

describe('on Redis Cluster', () => {
  test('the feed is accepted (feed-cluster.test.ts), but not the report of expired keys, saying why', () => {
    const nodes = { SVC_REDIS_CLUSTER_NODES: '127.0.0.1:7000', SVC_CHANGES_ENABLED: 'true' };
    expect(loadConfig(nodes).changes.enabled).toBe(true);
    const start = () => loadConfig({ ...nodes, SVC_CHANGES_EXPIRED: 'true' });
    expect(start).toThrow(ConfigError);
    expect(start).toThrow(/SVC_CHANGES_EXPIRED is not supported with SVC_REDIS_CLUSTER_NODES/);
  });
});
