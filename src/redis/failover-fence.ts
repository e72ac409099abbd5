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

/**
 * Once Sentinel has picked a replica to promote, the old master still accepts writes until it is told to follow
 * (seconds later): every write acknowledged there in between is lost. ioredis's failover detector moves the
 * connection only at +switch-master, the end of a failover; this listens for its start (+try-failover) as well,
 * on every configured Sentinel, and keeps writes out until the data connection is ready on the new master.
 */
export function failoverFence(redis: RedisClient, config: Config): Fence | undefined {
  const { sentinels, sentinelName } = config.redis;
  if (!sentinels || redis.isCluster) return undefined;
  const data = redis as Redis;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let awaitingReady = false;
  const open = () => {
    closed = false;
    awaitingReady = false;
    clearTimeout(timer);
  };
  const close = () => {
    closed = true;
    clearTimeout(timer);
    timer = setTimeout(open, MAX_FENCE_MS);
    timer.unref();
  };
  data.on('ready', () => {
    if (awaitingReady) open();
  });

  const onMessage = (channel: string, message: string) => {
    const parts = message.split(' ');
    if (channel === '+switch-master') {
      const [master, , , host, port] = parts; // <name> <old host> <old port> <new host> <new port>
      if (master !== sentinelName) return;
      // ioredis reconnects on the same message; open once the data connection is on the new master.
      const stream = (data as unknown as { stream?: { remoteAddress?: string; remotePort?: number } }).stream;
      if (data.status === 'ready' && stream?.remoteAddress === host && String(stream?.remotePort) === port)
        open();
      else awaitingReady = true;
      return;
    }
    const [kind, master] = parts; // master <name> <host> <port>
    if (kind !== 'master' || master !== sentinelName) return;
    if (channel === '+try-failover') close();
    else open(); // -failover-abort-...
  };
  const subscribers = sentinels.map(({ host, port }) => {
    const sub = new Redis({ host, port, lazyConnect: true, retryStrategy: (n) => Math.min(n * 100, 1000) });
    sub.on('error', () => {}); // the data connection reports Sentinel trouble
    sub.on('message', onMessage);
    sub.on('pmessage', (_pattern: string, channel: string, message: string) => onMessage(channel, message));
    sub.connect().then(
      () =>
        Promise.all([sub.subscribe('+try-failover', '+switch-master'), sub.psubscribe('-failover-abort-*')]),
      () => {},
    );
    return sub;
  });
  const stop = () => {
    clearTimeout(timer);
    for (const sub of subscribers) sub.disconnect();
  };
  data.once('end', stop);
  return {
    get closed() {
      return closed;
    },
    stop,
  };
}
