// A throwaway Redis Cluster of three masters (no replicas) on loopback ports, for tests that need one.
//
//   const cluster = await startRedisCluster();   // resolves once every node reports cluster_state:ok
//   cluster.nodes                                 // 'host:port,...' for SVC_REDIS_CLUSTER_NODES
//   await cluster.stop();
//   startRedisCluster(3, { tls: { pki }, hostname: 'localhost' })   // TLS only (bus too); nodes announce a name
import Redis from 'ioredis';
import { fleet, LOOPBACK, type RedisServer, startRedisServer } from './redis-server';
import { clientTls, type TlsServerOptions } from './tls';

const READY_TIMEOUT_MS = 20_000;
const SLOTS = 16384;

export interface RedisCluster {
  readonly servers: readonly RedisServer[];
  /** Seed nodes as SVC_REDIS_CLUSTER_NODES wants them. */
  readonly nodes: string;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitClusterOk(clients: Redis[]): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const infos = await Promise.all(clients.map((c) => c.cluster('INFO') as Promise<string>));
    const ready = infos.every(
      (info) => info.includes('cluster_state:ok') && info.includes(`cluster_known_nodes:${clients.length}`),
    );
    if (ready) return;
    await sleep(100);
  }
  throw new Error(`the test Redis Cluster did not reach cluster_state:ok within ${READY_TIMEOUT_MS} ms`);
}

/**
 * Starts `size` masters, splits the slots between them and introduces them, as `redis-cli --cluster create` does.
 * `config` is each node's config file text (a managed provider's renamed commands and ACL users).
 */
export async function startRedisCluster(
  size = 3,
  { config, tls, hostname }: { config?: string; tls?: TlsServerOptions; hostname?: string } = {},
): Promise<RedisCluster> {
  const { servers, clients, stop } = fleet<Redis>();
  const args = ['--cluster-enabled', 'yes', '--cluster-node-timeout', '2000'];
  if (hostname)
    args.push('--cluster-announce-hostname', hostname, '--cluster-preferred-endpoint-type', 'hostname');
  try {
    for (let i = 0; i < size; i++) servers.push(await startRedisServer({ args, config, tls }));
    for (const s of servers)
      clients.push(new Redis({ port: s.port, host: LOOPBACK, ...(tls ? { tls: clientTls(tls.pki) } : {}) }));
    const per = Math.ceil(SLOTS / size);
    await Promise.all(
      clients.map(async (c, i) => {
        await c.cluster('ADDSLOTSRANGE', i * per, Math.min(SLOTS, (i + 1) * per) - 1);
        await c.cluster('SET-CONFIG-EPOCH', i + 1);
      }),
    );
    const [first] = clients as [Redis];
    for (const s of servers.slice(1)) await first.cluster('MEET', LOOPBACK, s.port);
    await waitClusterOk(clients);
  } catch (err) {
    await stop();
    throw err;
  }
  return { servers, nodes: servers.map((s) => `${hostname ?? LOOPBACK}:${s.port}`).join(','), stop };
}
