import calculateSlot from 'cluster-key-slot';
import Redis from 'ioredis';
import request from 'supertest';
import type { Listener } from '../src/http/server';
import type { Service } from '../src/service';
import { clusterFeedService, type SseClient, sse } from './support/feed';
import { testPrefix } from './support/keys';
import { type RedisCluster, startRedisCluster } from './support/redis-cluster';
import { LOOPBACK, type RedisServer, startRedisServer } from './support/redis-server';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Polls `check` every 100 ms until it holds (bounded: a hang fails the test instead). */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`${what} within ${timeoutMs} ms`);
}

let cluster: RedisCluster;
let replica: RedisServer;
let replicaClient: Redis;
let master: Redis;
let service: Service;
let listener: Listener;
let base: string;
const prefix = testPrefix('feed-cluster-failover');

beforeAll(async () => {
  cluster = await startRedisCluster();
  replica = await startRedisServer({ args: ['--cluster-enabled', 'yes', '--cluster-node-timeout', '2000'] });
  replicaClient = new Redis(replica.port, LOOPBACK);
  const [first] = cluster.servers as [RedisServer];
  master = new Redis(first.port, LOOPBACK);
  const masterId = (await master.cluster('MYID')) as string;
  await replicaClient.cluster('MEET', LOOPBACK, first.port);
  await until('the replica knows the master', async () =>
    String(await replicaClient.cluster('NODES')).includes(masterId),
  );
  await replicaClient.cluster('REPLICATE', masterId);
  await until('the replica is in sync', async () =>
    String(await replicaClient.info('replication')).includes('master_link_status:up'),
  );
  ({ service, listener, base } = await clusterFeedService(cluster.nodes, prefix));
}, 90_000);

afterAll(async () => {
  await listener?.close(1000);
  await service?.close();
  replicaClient?.disconnect();
  master?.disconnect();
  await replica?.stop();
  await cluster?.stop();
});

const api = () => request(service.data);

/** A write, retried while the Cluster answers 503 (failing over: nothing was written). */
async function write(key: string) {
  for (let i = 0; ; i++) {
    const res = await api().post(`/store/string/${key}`).send({ value: 'v' });
    if (res.status !== 503 || i === 100) return expect(res.status).toBe(201);
    await sleep(200);
  }
}

test('a follower misses nothing across a manual failover of a master, whose stream goes on', async () => {
  // Keys on the failing-over master and on the others.
  const keys = Array.from({ length: 300 }, (_, i) => `f-${i}`);
  // CLUSTER SLOTS: [first, last, [host, port, id], ...replicas] for every range of every master.
  const { port } = cluster.servers[0] as RedisServer;
  const ranges = await master.cluster('SLOTS');
  const mine = ranges.filter((r) => r[2]?.[1] === port);
  const owned = (key: string) => {
    const slot = calculateSlot(prefix + key);
    return mine.some(([a, b]) => slot >= a && slot <= b);
  };
  const mineKeys = keys.filter(owned);
  const others = keys.filter((k) => !owned(k));
  const before = [...mineKeys.slice(0, 4), ...others.slice(0, 4)];
  const after = [...mineKeys.slice(4, 8), ...others.slice(4, 8)];
  let client: SseClient | undefined;
  try {
    client = sse(base, '?prefix=f-');
    expect(await client.status).toBe(200);
    for (const key of before) await write(key);
    await client.waitFor(before.length, 30_000);
    const stream = (await master.keys('#svc:changes:*'))[0] as string;
    expect(stream).toBeDefined();
    await replicaClient.cluster('FAILOVER');
    await until('the replica took over', async () =>
      String(await replicaClient.info('replication')).includes('role:master'),
    );
    await until('the old master follows it', async () =>
      String(await master.info('replication')).includes('role:slave'),
    );
    for (const key of after) await write(key);
    const got = await client.waitFor(before.length + after.length, 60_000);
    const seen = got.map((m) => (m.data as { key: string }).key);
    expect([...seen].sort()).toEqual([...before, ...after].sort());
    // The same stream, now on the promoted replica, holds the failed-over master's events of both sides.
    const events = await replicaClient.xrange(stream, '-', '+');
    expect(events).toHaveLength(8);
  } finally {
    // The Cluster is thrown away with its keys (afterAll).
    client?.close();
  }
}, 120_000);
