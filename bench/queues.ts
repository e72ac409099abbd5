// The queue family's benchmark: send + receive + ack through the service (HTTP, JSON, one script call each) beside
// a plain Redis client doing the same stream commands (XADD, XREADGROUP, XACK + XDEL). `npm run bench:queues`.
// Messages per second, and Redis's own CPU (main thread, INFO cpu) per message: robust to a busy machine.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { startRedisServer } from '../tests/support/redis-server';
import { startService, type Target } from './targets';

const SECONDS = Number(process.env.BENCH_QUEUE_SECONDS ?? 5);
/** Concurrent producer-consumer loops. */
const LOOPS = Number(process.env.BENCH_QUEUE_LOOPS ?? 16);
/** Messages per send, receive and ack. */
const BATCH = Number(process.env.BENCH_QUEUE_BATCH ?? 10);
const BODY = 'x'.repeat(100);

interface Row {
  name: string;
  messages: number;
  perSecond: number;
  redisCpuUsPerMessage: number;
}

async function redisCpuUs(probe: Redis): Promise<number> {
  const info = await probe.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return (field('used_cpu_user_main_thread') + field('used_cpu_sys_main_thread')) * 1e6;
}

/** Runs `loop` LOOPS times at once for `seconds`; each call answers the messages it acked. */
async function measure(
  name: string,
  probe: Redis,
  loop: () => Promise<number>,
  seconds: number,
): Promise<Row> {
  const cpuBefore = await redisCpuUs(probe);
  const end = Date.now() + seconds * 1000;
  const start = Date.now();
  const counts = await Promise.all(
    Array.from({ length: LOOPS }, async () => {
      let n = 0;
      while (Date.now() < end) n += await loop();
      return n;
    }),
  );
  const took = (Date.now() - start) / 1000;
  const messages = counts.reduce((a, b) => a + b, 0);
  const cpu = (await redisCpuUs(probe)) - cpuBefore;
  return { name, messages, perSecond: messages / took, redisCpuUsPerMessage: cpu / Math.max(1, messages) };
}

function serviceLoop(t: Target, queue: string): () => Promise<number> {
  // biome-ignore lint/suspicious/noExplicitAny: the answers' shapes are the contract's, read loosely here
  const call = async (method: string, what: string, body: unknown): Promise<any> => {
    const res = await fetch(`${t.url}/store/queues/${queue}${what}`, {
      method,
      headers: { ...t.headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${what}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const messages = Array.from({ length: BATCH }, () => ({ body: BODY }));
  return async () => {
    await call('POST', '/messages', { messages });
    const got = (await call('POST', '/receive', { max_messages: BATCH })).messages as { receipt: string }[];
    if (got.length === 0) return 0;
    const { results } = await call('POST', '/ack', { receipts: got.map((m) => m.receipt) });
    return (results as { status: string }[]).filter((r) => r.status === 'acked').length;
  };
}

function plainLoop(redis: Redis, stream: string): () => Promise<number> {
  return async () => {
    const pipeline = redis.pipeline();
    for (let i = 0; i < BATCH; i++) pipeline.xadd(stream, '*', 'b', BODY);
    await pipeline.exec();
    const got = (await redis.xreadgroup('GROUP', 'g', 'c', 'COUNT', BATCH, 'STREAMS', stream, '>')) as
      | [string, [string, string[]][]][]
      | null;
    const ids = got?.[0]?.[1].map(([id]) => id) ?? [];
    if (ids.length === 0) return 0;
    await Promise.all([redis.xack(stream, 'g', ...ids), redis.xdel(stream, ...ids)]);
    return ids.length;
  };
}

/** With BENCH_QUEUE_STATS=1: Redis's commandstats of the service's run, by time spent (scripts include their calls). */
async function commandStats(probe: Redis): Promise<string> {
  const text = await probe.info('commandstats');
  const rows = [...text.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)].map(([, c, n, us]) => ({
    c,
    n: Number(n),
    us: Number(us),
  }));
  return rows
    .sort((a, b) => b.us - a.us)
    .slice(0, 12)
    .map((r) => `  ${r.c}: ${r.n} calls, ${(r.us / r.n).toFixed(1)} µs/call`)
    .join('\n');
}

/**
 * The two rows as text lines, on the Redis at `redisUrl` (a service of its own is started and stopped): what
 * `npm run bench` adds to its notes (part `queues`) and `npm run bench:queues` prints.
 */
export async function queueLines(redisUrl: string, dir: string, seconds = SECONDS): Promise<string[]> {
  const probe = new Redis(redisUrl);
  const plain = new Redis(redisUrl);
  const service = await startService({ redisUrl, workers: 1, logFile: path.join(dir, 'queues-service.log') });
  try {
    const put = await fetch(`${service.url}/store/queues/bench`, {
      method: 'PUT',
      headers: { ...service.headers, 'content-type': 'application/json' },
      body: '{}',
    });
    if (!put.ok) throw new Error(`PUT queue: ${put.status}`);
    await plain.del('bench-plain');
    await plain.xgroup('CREATE', 'bench-plain', 'g', '$', 'MKSTREAM');
    await probe.call('CONFIG', 'RESETSTAT');
    const served = await measure(
      'service: send + receive + ack (HTTP)',
      probe,
      serviceLoop(service, 'bench'),
      seconds,
    );
    const stats = process.env.BENCH_QUEUE_STATS === '1' ? [await commandStats(probe)] : [];
    const rows = [
      served,
      await measure(
        'plain client: XADD + XREADGROUP + XACK + XDEL',
        probe,
        plainLoop(plain, 'bench-plain'),
        seconds,
      ),
    ];
    return [
      `queues (${LOOPS} loops, ${BATCH} messages per call, ${seconds} s each, ${BODY.length}-byte bodies): messages/s, Redis main-thread CPU µs per message`,
      ...rows.map(
        (r) =>
          `  ${r.name}: ${r.perSecond.toFixed(0)} messages/s, ${r.redisCpuUsPerMessage.toFixed(1)} µs/message`,
      ),
      ...stats,
    ];
  } finally {
    await service.server.stop();
    probe.disconnect();
    plain.disconnect();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-queues-'));
  const redis = await startRedisServer();
  try {
    for (const line of await queueLines(redis.url, dir)) console.log(line);
  } finally {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module)
  void main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
