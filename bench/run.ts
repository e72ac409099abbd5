// `npm run bench [-- --quick | --json | --memory | --profile]`: the service against its baselines, in one run.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { type RedisServer, startRedisServer } from '../scripts/redis-server';
import { drive, type LoadOptions } from './load';
import { rssNow } from './processes';
import { profileRun } from './profile';
import { addRatios, checks, formatText, type MemoryRun, type Row, row } from './report';
import { GET_STRING, probe, SERVICE_SCENARIOS } from './scenarios';
import {
  onPath,
  startExpressBaseline,
  startNodeBaseline,
  startService,
  startWebdis,
  type Target,
} from './targets';

const argv = new Set(process.argv.slice(2));
const quick = argv.has('--quick');
const load: LoadOptions = { connections: 50, duration: quick ? 3 : 10, warmup: quick ? 1 : 2 };
const MEMORY_RUN_SECONDS = quick ? 5 : 20;
const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

export function machine() {
  const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model;
  const redis = execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).match(/v=(\S+)/)?.[1];
  return { nproc: os.availableParallelism(), cpu, node: process.version, redis, loadavg: os.loadavg() };
}

/** Starts a target, runs `fn` against it, and always stops it. */
async function using<T>(start: () => Promise<Target>, fn: (t: Target) => Promise<T>): Promise<T> {
  const target = await start();
  try {
    return await fn(target);
  } finally {
    await target.server.stop();
  }
}

const measure = (t: Target, spec = GET_STRING.request) =>
  drive(t.url, { ...spec, headers: { ...spec.headers, ...t.headers } }, t.server.pid, load);

async function baselines(redis: RedisServer, dir: string, notes: string[]): Promise<Row[]> {
  log('baseline (a) express: GET');
  const rows = [
    row('GET string', 'baseline (a) express', await using(startExpressBaseline, (t) => measure(t))),
  ];
  log('baseline (b) node:http + ioredis: GET');
  const node = await using(
    () => startNodeBaseline(redis.url),
    (t) => measure(t),
  );
  rows.push(row('GET string', 'baseline (b) node+ioredis', node));
  if (onPath('webdis')) {
    log('baseline (c) webdis: GET');
    const spec = { method: 'GET' as const, path: '/GET/bench:string' };
    rows.push(
      row(
        'GET string',
        'baseline (c) webdis',
        await using(
          () => startWebdis(redis.port, dir),
          (t) => measure(t, spec),
        ),
      ),
    );
  } else {
    notes.push('baseline (c) webdis skipped: no `webdis` binary on the PATH');
  }
  return rows;
}

async function service(redisUrl: string, dir: string): Promise<Row[]> {
  const rows: Row[] = [];
  const opts = { redisUrl, workers: 1, logFile: path.join(dir, 'service.log') };
  await using(
    () => startService(opts),
    async (t) => {
      for (const scenario of SERVICE_SCENARIOS) {
        if ((await probe(t.url, scenario, t.headers)) === 'missing') {
          rows.push({
            ...row(scenario.title, 'service', null),
            note: 'N/A: route not served (404 unknown_endpoint)',
          });
          continue;
        }
        log(`service: ${scenario.title}`);
        rows.push(row(scenario.title, 'service', await measure(t, scenario.request), scenario.opsPerRequest));
      }
    },
  );
  log('service SVC_WORKERS=2: GET string');
  const workers = { ...opts, workers: 2, logFile: path.join(dir, 'workers.log') };
  rows.push(
    row(
      'GET string',
      'service SVC_WORKERS=2',
      await using(
        () => startService(workers),
        (t) => measure(t),
      ),
    ),
  );
  return rows;
}

/** Three consecutive GET runs on one fresh service process; RSS read right after each. */
async function memory(redisUrl: string, dir: string): Promise<MemoryRun[]> {
  const opts = { redisUrl, workers: 1, logFile: path.join(dir, 'memory.log') };
  return using(
    () => startService(opts),
    async (t) => {
      const runs: MemoryRun[] = [];
      for (let i = 0; i < 3; i++) {
        log(`memory: GET run ${i + 1}/3 (${MEMORY_RUN_SECONDS} s)`);
        const spec = { ...GET_STRING.request, headers: t.headers };
        const m = await drive(t.url, spec, t.server.pid, {
          ...load,
          duration: MEMORY_RUN_SECONDS,
          warmup: i === 0 ? load.warmup : 0,
        });
        runs.push({
          seconds: MEMORY_RUN_SECONDS,
          reqPerSec: m.reqPerSec,
          maxRssMb: m.rss.processMb,
          rssAfterMb: rssNow(t.server.pid).processMb,
        });
      }
      return runs;
    },
  );
}

async function main(): Promise<void> {
  const started = Date.now();
  const info = machine(); // before the load: the load average says how busy the machine already was
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-'));
  const redis = await startRedisServer({ root: dir });
  const raw = new Redis(redis.url);
  try {
    for (const scenario of SERVICE_SCENARIOS) await scenario.seed?.(raw);
    if (argv.has('--profile')) {
      await profileRun(redis.url, dir, load, process.env.BENCH_PROFILE_DIR ?? '/tmp/prof', log);
      return;
    }
    const notes: string[] = [];
    const rows: Row[] = [];
    if (!argv.has('--memory')) {
      rows.push(...(await baselines(redis, dir, notes)), ...(await service(redis.url, dir)));
      addRatios(rows, rows[0], rows[1]);
    }
    const memoryRuns = argv.has('--memory') || !quick ? await memory(redis.url, dir) : [];
    if (quick && !argv.has('--memory')) notes.push('memory runs skipped in --quick (run --memory)');
    const found = checks(rows, memoryRuns);
    const seconds = Math.round((Date.now() - started) / 1000);
    notes.push(`machine: ${info.nproc} CPUs (${info.cpu}), node ${info.node}, redis ${info.redis}`);
    notes.push(`load average at start ${info.loadavg.map((l) => l.toFixed(2)).join(' ')}; took ${seconds} s`);
    if (argv.has('--json')) {
      const result = { machine: info, load, seconds, rows, memory: memoryRuns, checks: found, notes };
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    } else {
      process.stdout.write(formatText(rows, memoryRuns, found, notes));
    }
  } finally {
    await raw.quit();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

process.on('SIGINT', () => process.exit(130)); // runs the 'exit' hooks that kill the servers
main().catch((err) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
