// Behind Sentinel: refuses writes (503) from the moment a failover of our master starts until we use the new one.
import Redis from 'ioredis';
import type { Config } from '../config';
import type { RedisClient } from './client';

/** Longest a fence stays up without news of the failover's end (an abort we did not hear of). */
const MAX_FENCE_MS = 15_000;

export interface Fence {
  /** True while a failover is under way: a write now could land on a master that is being replaced. */
  readonly closed: boolean;
  /** Stops listening to the Sentinels (the service's close). */
  stop(): void;
}

type Stream = { remoteAddress?: string; remotePort?: number };
const on = (connection: Redis, address: string) => {
  const stream = (connection as unknown as { stream?: Stream }).stream;
  return connection.status === 'ready' && `${stream?.remoteAddress}:${stream?.remotePort}` === address;
};

/**
 * Once Sentinel has picked a replica to promote, the old master still accepts writes until it is told to follow
 * (seconds later): every write acknowledged there in between is lost. ioredis's failover detector moves the
 * connection only at +switch-master, the end of a failover; this listens for its start (+try-failover) as well,
 * on every configured Sentinel, and keeps writes out until every connection that carries writes is ready on the
 * announced master (ioredis may first reconnect to the old one, named by a Sentinel that has not heard yet).
 */
export function failoverFence(writers: RedisClient[], config: Config): Fence | undefined {
  const { sentinels, sentinelName } = config.redis;
  if (!sentinels || writers.some((w) => w.isCluster)) return undefined;
  const connections = writers as Redis[];
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let newMaster: string | undefined; // host:port announced by +switch-master, until every writer is on it
  const open = () => {
    closed = false;
    newMaster = undefined;
    clearTimeout(timer);
  };
  const openIfMoved = () => {
    if (newMaster && connections.every((c) => on(c, newMaster as string))) open();
  };
  const close = () => {
    closed = true;
    clearTimeout(timer);
    timer = setTimeout(open, MAX_FENCE_MS);
    timer.unref();
  };
  for (const c of connections) c.on('ready', openIfMoved);

  const onMessage = (channel: string, message: string) => {
    const parts = message.split(' ');
    if (channel === '+switch-master') {
      const [master, , , host, port] = parts; // <name> <old host> <old port> <new host> <new port>
      if (master !== sentinelName || !closed) return;
      newMaster = `${host}:${port}`;
      openIfMoved();
      return;
    }
    const [kind, master] = parts; // master <name> <host> <port>
    if (kind !== 'master' || master !== sentinelName) return;
    if (channel === '+try-failover') close();
    // A Sentinel that lost the election aborts while the winner's failover goes on.
    else if (channel !== '-failover-abort-not-elected') open();
  };
  const subscribers = sentinels.map(({ host, port }) => {
    const sub = new Redis({
      host,
      port,
      autoResubscribe: false,
      // Connected once the data connection first is: not before the start's TLS check (tls.ts).
      lazyConnect: true,
      // TLS as the data connection's Sentinel connections (none without).
      tls: connections[0]?.options.sentinelTLS,
      retryStrategy: (n) => Math.min(n * 100, 1000),
    });
    sub.on('error', () => {}); // the data connection reports Sentinel trouble
    sub.on('message', onMessage);
    sub.on('pmessage', (_pattern: string, channel: string, message: string) => onMessage(channel, message));
    // Subscribed again on every (re)connection, also when the first attempt found the Sentinel down.
    sub.on('ready', () => {
      sub.subscribe('+try-failover', '+switch-master').catch(() => {});
      sub.psubscribe('-failover-abort-*').catch(() => {});
    });
    return sub;
  });
  const start = () => {
    for (const sub of subscribers) sub.connect().catch(() => {}); // retried by its retryStrategy
  };
  connections[0]?.once('ready', start);
  const stop = () => {
    connections[0]?.off('ready', start);
    clearTimeout(timer);
    for (const sub of subscribers) sub.disconnect();
  };
  connections[0]?.once('end', stop);
  return {
    get closed() {
      return closed;
    },
    stop,
  };
}
