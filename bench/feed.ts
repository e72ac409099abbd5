// The change feed's benchmark: many SSE subscribers while writes come at a fixed rate (delivery latency), and the
// writes' own throughput with the feed off vs on (with those subscribers attached). `npm run bench:feed`.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startRedisServer } from '../tests/support/redis-server';
import { drive, type Measurement } from './load';
import { VALUE } from './scenarios';
import { startService, type Target } from './targets';

const SUBSCRIBERS = Number(process.env.BENCH_FEED_SUBSCRIBERS ?? 500);
const RATE = Number(process.env.BENCH_FEED_RATE ?? 200);
const PACED_SECONDS = Number(process.env.BENCH_FEED_SECONDS ?? 20);
/** Processes the subscribers are spread over, so that the load generator is not the bottleneck. */
const SUBSCRIBER_PROCESSES = 2;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Wall-clock microseconds, comparable between this process and its children. */
const nowUs = () => Math.round((performance.timeOrigin + performance.now()) * 1000);

/** A child process: opens `count` SSE streams and reports the delay of each event (key = `feed:<sent at µs>`). */
async function subscriberProcess(url: string, count: number, auth: string): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  const delaysUs: number[] = [];
  let open = 0;
  for (let i = 0; i < count; i++) {
    const req = http.get(`${url}/store/changes`, {
      agent,
      headers: { Accept: 'text/event-stream', Authorization: auth },
    });
    req.on('response', (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (chunk.includes(': following changes')) open++;
        for (const m of chunk.matchAll(/"key":"feed:(\d+)"/g)) delaysUs.push(nowUs() - Number(m[1]));
      });
    });
    req.on('error', () => {});
  }
  process.on('message', (message) => {
    if (message === 'open?') process.send?.({ open });
    if (message === 'report') process.send?.({ delaysUs: delaysUs.splice(0) });
    if (message === 'exit') process.exit(0);
  });
}

interface Child {
  ask<T>(message: string): Promise<T>;
  stop(): void;
}

function startSubscribers(target: Target, count: number): Child {
  const child = fork(__filename, [
    'subscribers',
    target.url,
    String(count),
    target.headers.authorization ?? '',
  ]);
  return {
    ask: <T>(message: string) =>
      new Promise<T>((resolve) => {
        child.once('message', (reply) => resolve(reply as T));
        child.send(message);
      }),
    stop: () => child.send('exit'),
  };
}

/** POSTs at `rate` per second for `seconds`, each to a key that carries its send time. */
async function pacedWrites(
  target: Target,
  rate: number,
  seconds: number,
): Promise<{ sent: number; failed: number; latenciesMs: number[] }> {
  const latenciesMs: number[] = [];
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const body = JSON.stringify({ value: VALUE });
  let sent = 0;
  let failed = 0;
  const pending: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const sentAt = performance.now();
    const req = http.request(`${target.url}/store/string/feed:${nowUs()}`, {
      method: 'POST',
      agent,
      headers: { ...target.headers, 'Content-Type': 'application/json' },
    });
    pending.push(
      new Promise<void>((resolve) => {
        req.on('response', (res) => {
          if ((res.statusCode ?? 0) >= 300) failed++;
          res.resume();
          res.on('end', () => {
            latenciesMs.push(performance.now() - sentAt);
            resolve();
          });
        });
        req.on('error', () => {
          failed++;
          resolve();
        });
      }),
    );
    req.end(body);
    sent++;
  }
  await Promise.all(pending);
  agent.destroy();
  latenciesMs.sort((a, b) => a - b);
  return { sent, failed, latenciesMs };
}

const percentile = (sorted: number[], p: number) => sorted[Math.floor(p * (sorted.length - 1))] ?? 0;

const throughput = (target: Target, pid: number): Promise<Measurement> =>
  drive(
    target.url,
    {
      method: 'POST',
      path: '/store/string/bench:feed-post',
      headers: { ...target.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ value: VALUE }),
    },
    pid,
    { connections: 50, duration: 10, warmup: 3 },
  );

const ms = (x: number) => x.toFixed(2);
const describe = (m: Measurement) =>
  `${m.reqPerSec.toFixed(0)} req/s (p50 ${ms(m.p50Ms)} ms, p99 ${ms(m.p99Ms)} ms, ${m.non2xx + m.errors} errors, ` +
  `service CPU ${m.usage.cpuPercent.toFixed(0)} %)`;
const paced = (w: Awaited<ReturnType<typeof pacedWrites>>) =>
  `${w.sent} writes at ${RATE}/s, ${w.failed} failed, write latency p50 ${ms(percentile(w.latenciesMs, 0.5))} ms, ` +
  `p99 ${ms(percentile(w.latenciesMs, 0.99))} ms`;

async function dropped(target: Target): Promise<string> {
  const res = await fetch(`${target.url}/store/admin/metrics`, { headers: target.headers });
  return /svc_changes_subscribers_dropped_total\{transport="sse"\} (\d+)/.exec(await res.text())?.[1] ?? '0';
}

/** One service with the feed off or on: max write throughput, then (on) the paced writes with the subscribers. */
async function run(redisUrl: string, dir: string, feed: boolean): Promise<string[]> {
  const target = await startService({
    redisUrl,
    workers: 1,
    logFile: path.join(dir, `service-${feed}.log`),
    settings: {
      SVC_CHANGES_ENABLED: String(feed),
      SVC_CHANGES_MAX_SUBSCRIBERS: String(SUBSCRIBERS + 100),
      // Every subscriber comes from 127.0.0.1.
      SVC_MAX_CONNECTIONS_PER_IP: '0',
    },
  });
  const name = feed ? 'feed on' : 'feed off';
  const lines: string[] = [];
  const children: Child[] = [];
  try {
    lines.push(
      `${name}, no subscribers: POST string ${describe(await throughput(target, target.server.pid))}`,
    );
    if (!feed) {
      lines.push(`${name}: ${paced(await pacedWrites(target, RATE, PACED_SECONDS))}`);
      return lines;
    }
    const perProcess = Math.ceil(SUBSCRIBERS / SUBSCRIBER_PROCESSES);
    for (let i = 0; i < SUBSCRIBER_PROCESSES; i++) children.push(startSubscribers(target, perProcess));
    const deadline = Date.now() + 60_000;
    let open = 0;
    while (Date.now() < deadline) {
      const replies = await Promise.all(children.map((c) => c.ask<{ open: number }>('open?')));
      open = replies.reduce((a, r) => a + r.open, 0);
      if (open >= perProcess * SUBSCRIBER_PROCESSES) break;
      await sleep(500);
    }
    const writes = await pacedWrites(target, RATE, PACED_SECONDS);
    await sleep(2000);
    const reports = await Promise.all(children.map((c) => c.ask<{ delaysUs: number[] }>('report')));
    const delays = reports.flatMap((r) => r.delaysUs).sort((a, b) => a - b);
    lines.push(`${name}, ${open} SSE subscribers: ${paced(writes)}`);
    lines.push(
      `${name}, ${open} SSE subscribers: ${delays.length} of ${writes.sent * open} deliveries; delivery latency ` +
        `(write sent -> event parsed by the subscriber) p50 ${ms(percentile(delays, 0.5) / 1000)} ms, ` +
        `p99 ${ms(percentile(delays, 0.99) / 1000)} ms, max ${ms((delays[delays.length - 1] ?? 0) / 1000)} ms`,
    );
    const m = await throughput(target, target.server.pid);
    lines.push(
      `${name}, ${open} SSE subscribers attached: POST string ${describe(m)}; subscribers dropped as too slow: ${await dropped(target)}`,
    );
    return lines;
  } finally {
    for (const c of children) c.stop();
    await target.server.stop();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-feed-'));
  process.env.TEST_REDIS_TMPDIR = dir;
  const redis = await startRedisServer();
  const started = Date.now();
  try {
    const lines = [...(await run(redis.url, dir, false)), ...(await run(redis.url, dir, true))];
    lines.push(
      `machine: ${os.cpus().length} CPUs, load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}; took ${Math.round((Date.now() - started) / 1000)} s`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'subscribers') {
  void subscriberProcess(process.argv[3] as string, Number(process.argv[4]), process.argv[5] as string);
} else {
  process.on('SIGINT', () => process.exit(130));
  main().catch((err) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  });
}
