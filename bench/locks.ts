// How soon a waiting lock acquire is granted after the holder releases: the release→grant latency over N trials,
// the holder on one service process and the waiter on another (the wake-up crosses Redis pub/sub).
// `npm run bench:locks` (BENCH_LOCK_TRIALS, default 200).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startRedisServer } from '../tests/support/redis-server';
import { startService, type Target } from './targets';

const TRIALS = Number(process.env.BENCH_LOCK_TRIALS ?? 200);
/** How long the waiter waits before the release: long enough that its acquire is asleep, not still trying. */
const SETTLE_MS = 50;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted: number[], p: number) => sorted[Math.floor(p * (sorted.length - 1))] ?? 0;
const ms = (x: number) => x.toFixed(2);

async function post(target: Target, path: string, body: object): Promise<Record<string, unknown>> {
  const res = await fetch(`${target.url}${path}`, {
    method: 'POST',
    headers: { ...target.headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** One trial: `holder` takes the lock, `waiter` waits for it, the holder releases; ms from release sent to grant. */
async function trial(
  holder: Target,
  waiter: Target,
  name: string,
): Promise<{ grantMs: number; releaseMs: number }> {
  const held = await post(holder, `/store/locks/${name}/acquire`, { ttl_ms: 30_000 });
  let granted = 0;
  const waiting = post(waiter, `/store/locks/${name}/acquire`, { ttl_ms: 30_000, wait_ms: 10_000 }).then(
    (g) => {
      granted = performance.now();
      return g;
    },
  );
  await sleep(SETTLE_MS);
  const sent = performance.now();
  await post(holder, `/store/locks/${name}/release`, { token: held.token });
  const releaseMs = performance.now() - sent;
  const grant = await waiting;
  await post(waiter, `/store/locks/${name}/release`, { token: grant.token });
  return { grantMs: granted - sent, releaseMs };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-locks-'));
  const redis = await startRedisServer();
  const redisUrl = `redis://127.0.0.1:${redis.port}`;
  const targets: Target[] = [];
  try {
    for (const n of [1, 2])
      targets.push(await startService({ redisUrl, workers: 1, logFile: path.join(dir, `service-${n}.log`) }));
    const [holder, waiter] = targets as [Target, Target];
    for (let i = 0; i < 10; i++) await trial(holder, waiter, 'bench:warmup');
    const grants: number[] = [];
    const releases: number[] = [];
    const deadline = Date.now() + 5 * 60_000;
    for (let i = 0; i < TRIALS && Date.now() < deadline; i++) {
      const { grantMs, releaseMs } = await trial(holder, waiter, `bench:lock:${i % 10}`);
      grants.push(grantMs);
      releases.push(releaseMs);
    }
    grants.sort((a, b) => a - b);
    releases.sort((a, b) => a - b);
    const row = (what: string, xs: number[]) =>
      `${what}: p50 ${ms(percentile(xs, 0.5))} ms, p90 ${ms(percentile(xs, 0.9))} ms, ` +
      `p99 ${ms(percentile(xs, 0.99))} ms, max ${ms(xs[xs.length - 1] ?? 0)} ms`;
    console.log(`${grants.length} trials, holder and waiter on two service processes, one Redis`);
    console.log(row('release sent -> waiting acquire answered', grants));
    console.log(row('release sent -> release answered (its own round trip)', releases));
    console.log(`over 50 ms: ${grants.filter((x) => x > 50).length} of ${grants.length}`);
  } finally {
    for (const t of targets) await t.server.stop();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
