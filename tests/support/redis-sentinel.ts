// A throwaway Sentinel set on loopback ports: one master, one replica and three Sentinels watching them.
//
//   const set = await startSentinelSet();       // resolves once the replica is in sync and every Sentinel knows it
//   set.sentinels                                // 'host:port,...' for SVC_REDIS_SENTINELS (name: set.name)
//   await set.failover();                        // SENTINEL FAILOVER; resolves once the replica is the master
//   await set.stop();
//   startSentinelSet('gw', { tls: { pki } })   // every server (Sentinels too) on TLS only, replication over TLS
import Redis from 'ioredis';
import { fleet, LOOPBACK, type RedisServer, startRedisServer } from './redis-server';
import { clientTls, type TlsServerOptions } from './tls';

const READY_TIMEOUT_MS = 30_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface SentinelSet {
  readonly name: string;
  readonly master: RedisServer;
  readonly replica: RedisServer;
  readonly sentinelServers: readonly RedisServer[];
  /** Seed Sentinels as SVC_REDIS_SENTINELS wants them. */
  readonly sentinels: string;
  /** The port of the server the Sentinels name as master now. */
  masterPort(): Promise<number>;
  /** Asks a Sentinel to fail over and resolves once every Sentinel names the other server, and it is a master. */
  failover(): Promise<RedisServer>;
  stop(): Promise<void>;
}

async function waitUntil(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`the test Sentinel set: ${what} did not happen within ${READY_TIMEOUT_MS} ms`);
}

const infoField = (info: string, name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();

export async function startSentinelSet(
  name = 'gw',
  { tls }: { tls?: TlsServerOptions } = {},
): Promise<SentinelSet> {
  const { servers, clients, stop } = fleet<Redis>();
  const connect = (port: number) =>
    new Redis({ port, host: LOOPBACK, ...(tls ? { tls: clientTls(tls.pki) } : {}) });
  try {
    const master = await startRedisServer({ tls });
    servers.push(master);
    const replica = await startRedisServer({ args: ['--replicaof', LOOPBACK, String(master.port)], tls });
    servers.push(replica);
    const config = [
      `sentinel monitor ${name} ${LOOPBACK} ${master.port} 2`,
      `sentinel down-after-milliseconds ${name} 2000`,
      `sentinel failover-timeout ${name} 10000`,
      `sentinel parallel-syncs ${name} 1`,
      '',
    ].join('\n');
    const sentinelServers: RedisServer[] = [];
    for (let i = 0; i < 3; i++) {
      const s = await startRedisServer({ args: ['--sentinel'], config, tls });
      servers.push(s);
      sentinelServers.push(s);
    }
    const sentinelClients = sentinelServers.map((s) => connect(s.port));
    const masterClient = connect(master.port);
    clients.push(...sentinelClients, masterClient);
    await waitUntil('the replica catching up', async () => {
      const info = (await masterClient.info('replication')) as string;
      return infoField(info, 'connected_slaves') === '1' && /slave0:.*state=online/.test(info);
    });
    // A Sentinel finds replicas through the master's INFO and other Sentinels through hello messages.
    await waitUntil('every Sentinel knowing the replica and the others', async () => {
      for (const c of sentinelClients) {
        const replicas = (await c.call('SENTINEL', 'REPLICAS', name)) as string[][];
        const others = (await c.call('SENTINEL', 'SENTINELS', name)) as string[][];
        const ok = replicas.some(
          (r) => r.join(' ').includes(`flags slave`) && !r.join(' ').includes('s_down'),
        );
        if (!ok || others.length < 2) return false;
      }
      return true;
    });

    const masterPort = async () => {
      const [, port] = (await (sentinelClients[0] as Redis).call(
        'SENTINEL',
        'GET-MASTER-ADDR-BY-NAME',
        name,
      )) as [string, string];
      return Number(port);
    };
    const failover = async () => {
      const before = await masterPort();
      const next = before === master.port ? replica : master;
      await (sentinelClients[0] as Redis).call('SENTINEL', 'FAILOVER', name);
      const nextClient = connect(next.port);
      clients.push(nextClient);
      await waitUntil('the failover', async () => {
        for (const c of sentinelClients) {
          const [, port] = (await c.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as [string, string];
          if (Number(port) !== next.port) return false;
        }
        return infoField((await nextClient.info('replication')) as string, 'role') === 'master';
      });
      return next;
    };
    return {
      name,
      master,
      replica,
      sentinelServers,
      sentinels: sentinelServers.map((s) => `${LOOPBACK}:${s.port}`).join(','),
      masterPort,
      failover,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
