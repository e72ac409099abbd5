// Failovers under writers, with real processes: what got a 2xx is still there afterwards, and nothing is a 500.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Redis from 'ioredis';
import { type TestApp, testApp } from './support/app';
import { type RedisCluster, startRedisCluster } from './support/redis-cluster';
import { type SentinelSet, startSentinelSet } from './support/redis-sentinel';
import { LOOPBACK, type RedisServer, startRedisServer } from './support/redis-server';
import { replicatedApp } from './support/replicated';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Serves the app on a loopback port, so that writers can use keep-alive connections as real clients do. */
async function serve(t: TestApp): Promise<{ base: string; close: () => Promise<void> }> {
  const server: Server = await new Promise((resolve) => {
    const s = t.data.listen(0, LOOPBACK, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://${LOOPBACK}:${port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

interface Tally {
  /** key -> value of every write answered 2xx. */
  acknowledged: Map<string, string>;
  /** When each of those writes was sent (Date.now()). */
  sentAt: number[];
  statuses: Map<number, number>;
}

/**
 * Starts `writers` loops, each writing its own keys one after another until `stop()`, which resolves to what they
 * saw; every loop ends after `maxMs` whatever happens.
 */
function startWriters(base: string, writers: number, maxMs = 60_000) {
  const tally: Tally = { acknowledged: new Map(), sentAt: [], statuses: new Map() };
  let stopped = false;
  const deadline = Date.now() + maxMs;
  const loops = Array.from({ length: writers }, async (_, w) => {
    for (let n = 0; !stopped && Date.now() < deadline; n++) {
      const key = `w${w}-${n}`;
      const value = `v${n}`;
      const sentAt = Date.now();
      const status = await fetch(`${base}/store/string/${key}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ value }),
        signal: AbortSignal.timeout(10_000),
      }).then(
        (res) => res.arrayBuffer().then(() => res.status),
        () => 0, // no answer at all (a reset): counted, and must not happen
      );
      tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
      if (status >= 200 && status < 300) {
        tally.acknowledged.set(key, value);
        tally.sentAt.push(sentAt);
      }
      if (status >= 500) await sleep(20); // as a client honouring retry_after would, a little
    }
  });
  return {
    tally,
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
      return tally;
    },
  };
}

/** The acknowledged writes that the server at `port` does not hold. */
async function lost(port: number, prefix: string, tally: Tally): Promise<string[]> {
  const client = new Redis(port, LOOPBACK);
  try {
    const keys = [...tally.acknowledged.keys()];
    const values = keys.length ? await client.mget(keys.map((k) => prefix + k)) : [];
    return keys.filter((k, i) => values[i] !== tally.acknowledged.get(k));
  } finally {
    client.disconnect();
  }
}

const only = (tally: Tally, allowed: number[]) =>
  [...tally.statuses.keys()].filter((status) => !allowed.includes(status));

describe('behind Sentinel (1 master, 1 replica, 3 Sentinels) with SVC_REDIS_WAIT_REPLICAS=1', () => {
  let set: SentinelSet;
  let t: TestApp;
  let http: Awaited<ReturnType<typeof serve>>;

  beforeAll(async () => {
    set = await startSentinelSet();
    t = await testApp('failover', {
      SVC_REDIS_SENTINELS: set.sentinels,
      SVC_REDIS_SENTINEL_NAME: set.name,
      SVC_REDIS_WAIT_REPLICAS: '1',
    });
    http = await serve(t);
  }, 60_000);

  afterAll(async () => {
    await http?.close();
    await t?.close();
    await set?.stop();
  });

  test('when Sentinel fails over under 4 writers, then every write answered 201 is on the new master', async () => {
    const writers = startWriters(http.base, 4);
    await sleep(1000);
    const next = await set.failover();
    const switched = Date.now();
    // Keep writing until the service has followed the switch: writes sent after it are acknowledged again.
    for (const until = Date.now() + 20_000; Date.now() < until; await sleep(200)) {
      if (writers.tally.sentAt.filter((at) => at > switched).length >= 20) break;
    }
    const tally = await writers.stop();

    expect(only(tally, [201, 503])).toEqual([]);
    expect(tally.sentAt.filter((at) => at > switched).length).toBeGreaterThanOrEqual(20);
    expect(await lost(next.port, t.prefix, tally)).toEqual([]);
  }, 90_000);
});

describe('when the primary is demoted behind the same address (a managed Redis failover)', () => {
  let primary: RedisServer;
  let other: RedisServer;
  let t: TestApp;

  beforeAll(async () => {
    primary = await startRedisServer();
    other = await startRedisServer({ args: ['--replicaof', LOOPBACK, String(primary.port)] });
    t = await testApp('readonly', { SVC_REDIS_URL: primary.url });
  });

  afterAll(async () => {
    await t?.close();
    await Promise.all([primary?.stop(), other?.stop()]);
  });

  test('then writes answer 503 service_unavailable, never 500 and never 201, and reads still work', async () => {
    const http = await serve(t);
    try {
      const first = await fetch(`${http.base}/store/string/before`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ value: 'kept' }),
      });
      expect(first.status).toBe(201);
      const admin = [new Redis(primary.port, LOOPBACK), new Redis(other.port, LOOPBACK)] as const;
      await admin[0].wait(1, 5000);
      await admin[1].replicaof('NO', 'ONE');
      await admin[0].replicaof(LOOPBACK, String(other.port));
      for (const c of admin) c.disconnect();

      const writers = startWriters(http.base, 2);
      await sleep(1500);
      const tally = await writers.stop();
      expect(only(tally, [503])).toEqual([]);

      const res = await fetch(`${http.base}/store/string/x`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ value: 'v' }),
      });
      const body = (await res.json()) as { error: string; retry_after: number };
      expect(res.status).toBe(503);
      expect(body).toMatchObject({ error: 'service_unavailable', retry_after: expect.any(Number) });
      // Reads are served by the demoted server once the connection it reset for the READONLY reply is back.
      let read = 0;
      for (const until = Date.now() + 10_000; read !== 200 && Date.now() < until; await sleep(100))
        read = (await fetch(`${http.base}/store/string/before`)).status;
      expect(read).toBe(200);
    } finally {
      await http.close();
    }
  }, 60_000);
});

describe('on a Redis Cluster of three masters when one is killed', () => {
  let cluster: RedisCluster;
  let t: TestApp;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    t = await testApp('cluster-kill', { SVC_REDIS_CLUSTER_NODES: cluster.nodes });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await cluster?.stop();
  });

  test('then writes answer 201 or 503, never 500, and health says unhealthy', async () => {
    const http = await serve(t);
    try {
      expect((await fetch(`${http.base}/store/admin/health`)).status).toBe(200);
      const writers = startWriters(http.base, 4);
      await sleep(500);
      await cluster.servers[1]?.kill();
      // Past cluster-node-timeout (2 s): the others mark it failed and the cluster reports CLUSTERDOWN.
      await sleep(4000);
      const health = await fetch(`${http.base}/store/admin/health`);
      const tally = await writers.stop();
      expect(only(tally, [201, 503])).toEqual([]);
      expect(tally.statuses.get(503) ?? 0).toBeGreaterThan(0);
      expect(health.status).toBe(503);
    } finally {
      await http.close();
    }
  }, 60_000);
});

describe('with SVC_REDIS_WAIT_REPLICAS=1 when the replica is away', () => {
  let primary: RedisServer;
  let replica: RedisServer;
  let t: TestApp;

  beforeAll(async () => {
    ({ primary, replica, t } = await replicatedApp('unconfirmed'));
  });

  afterAll(async () => {
    await t?.close();
    await Promise.all([primary?.stop(), replica?.stop()]);
  });

  test('then writes answer 503 saying the outcome is unknown, and reads are not held up', async () => {
    const http = await serve(t);
    const post = (path: string, body: unknown) =>
      fetch(`${http.base}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const primaryClient = new Redis(primary.port, LOOPBACK);
    try {
      // Confirmed while the replica is there.
      for (const until = Date.now() + 10_000; Date.now() < until; await sleep(100)) {
        if ((await primaryClient.info('replication')).includes('state=online')) break;
      }
      expect((await post('/store/string/confirmed', { value: 'v' })).status).toBe(201);

      await replica.stop();
      const [single, batch, read] = await Promise.all([
        post('/store/string/unconfirmed', { value: 'v' }),
        post('/store/hash/batch', { operations: [{ type: 'set', key: 'h', fields: { a: '1' } }] }),
        fetch(`${http.base}/store/string/confirmed`),
      ]);
      const body = (await single.json()) as { error: string; message: string; retry_after: number };
      expect(single.status).toBe(503);
      expect(body.error).toBe('service_unavailable');
      expect(body.message).toMatch(
        /reached the primary but 1 replica\(s\) did not confirm it .*outcome is unknown/,
      );
      expect(body.retry_after).toBeGreaterThan(0);
      expect(batch.status).toBe(503);
      expect(read.status).toBe(200);
      // The write did reach the primary: that is why its outcome is "unknown", not "failed".
      expect(await primaryClient.get(`${t.prefix}unconfirmed`)).toBe('v');
    } finally {
      primaryClient.disconnect();
      await http.close();
    }
  }, 60_000);
});
