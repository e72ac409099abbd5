// `npm run bench [-- --quick | --json | --memory | --profile ...]`: the service against its baselines, in one run.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { type RedisServer, startRedisServer } from '../tests/support/redis-server';
import { compare } from './compare';
import type { Measurement, RequestSpec } from './load';
import { parseOptions, USAGE } from './options';
import { pinCpus, rssNow } from './processes';
import { profileRun } from './profile';
import { queueLines } from './queues';
import {
  addRatios,
  checks,
  EXPRESS,
  formatText,
  type MemoryRun,
  NODE,
  ONE_CLIENT,
  type Row,
  row,
} from './report';
import { BATCH, GET_STRING, probe, type Scenario, SERVICE_SCENARIOS } from './scenarios';
import * as targets from './targets';

if (process.argv.includes('--help')) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const options = (() => {
  try {
    return parseOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
})();
const { parts } = options;
/** The run's load options; the bench's own redis-server's pid is added once it runs (its CPU is sampled too). */
let load = options.load;
const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

/** The CPUs this process may run on (Cpus_allowed_list: "0-3,6"), read before --pin narrows them. */
function allowedCpus(): number[] {
  const list = /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '';
  return list.split(',').flatMap((part) => {
    const [from, to = from] = part.split('-').map(Number) as [number, number?];
    return Array.from({ length: (to as number) - from + 1 }, (_, i) => from + i);
  });
}
/** With --pin: the servers' CPU (the last allowed), and the others, where the load generator (this process) and Redis run. */
const CPUS = allowedCpus();
const SERVER_CPU = String(CPUS.at(-1));
const OTHER_CPUS = CPUS.slice(0, -1).join(',');
function pin(pid: number, cpus: string): void {
  if (CPUS.length < 2 || !pinCpus(pid, cpus))
    throw new Error(
      `--pin needs taskset (util-linux) and at least 2 CPUs (pinning ${pid} to ${cpus} failed)`,
    );
}
/** A started server on the servers' CPU, with --pin. */
const pinned = (t: targets.Target): targets.Target => {
  if (options.pin) pin(t.server.pid, SERVER_CPU);
  return t;
};

function machine() {
  const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model;
  const redis = execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).match(/v=(\S+)/)?.[1];
  return { nproc: os.cpus().length, cpu, node: process.version, redis, loadavg: os.loadavg() };
}

/** Starts a target, runs `fn` against it, and always stops it. */
async function using<T>(
  start: () => Promise<targets.Target>,
  fn: (t: targets.Target) => Promise<T>,
): Promise<T> {
  const target = await start();
  try {
    return await fn(target);
  } finally {
    await target.server.stop();
  }
}

const measure = (t: targets.Target, spec = GET_STRING.request, opts = load) =>
  targets.driveTarget(t, spec, opts);

/** One row of the table: a scenario against a target. */
interface Job {
  scenario: string;
  target: string;
  server: targets.Target;
  request: RequestSpec;
  opsPerRequest: number;
  /** Server processes that share the load: each gets the same warm-up as a single process. */
  processes: number;
  /** Concurrent connections, when not the run's (`--connections`). */
  connections?: number;
  runs: Measurement[];
}

const serviceOptions = (redisUrl: string, dir: string, workers: number) => ({
  redisUrl,
  workers,
  logFile: path.join(dir, `service-${workers}-${Date.now()}.log`),
  settings: options.settings,
  nodeArgs: options.nodeArgs,
});

/**
 * Every target the parts need, all started before any load (an idle server costs nothing), so that the rounds
 * can alternate between them; stopped by `stopAll`.
 */
async function startAll(redis: RedisServer, dir: string, notes: string[]) {
  const started: targets.Target[] = [];
  const start = async (fn: () => Promise<targets.Target>) => {
    const t = await fn();
    started.push(t);
    return pinned(t);
  };
  const jobs: Job[] = [];
  const rows: Row[] = [];
  const job = (
    scenario: string,
    target: string,
    server: targets.Target,
    { request, opsPerRequest }: Pick<Scenario, 'request' | 'opsPerRequest'> = GET_STRING,
    processes = 1,
    connections?: number,
  ) => jobs.push({ scenario, target, server, request, opsPerRequest, processes, connections, runs: [] });
  if (parts.has('express')) job('GET string', EXPRESS, await start(targets.startExpressBaseline));
  if (parts.has('node') || parts.has('batch')) {
    const node = await start(() => targets.startNodeBaseline(redis.url));
    if (parts.has('node')) {
      job('GET string', NODE, node);
      job(ONE_CLIENT, NODE, node, GET_STRING, 1, 1);
    }
    // The batch's floor on this machine (baseline-node.ts): the batch target is read against it.
    if (parts.has('batch')) job(BATCH.title, NODE, node, BATCH);
    // The plain client's Redis work for the scenarios with a Redis target (report.ts REDIS_TARGETS).
    for (const scenario of SERVICE_SCENARIOS)
      if (parts.has(scenario.id) && PLAIN_ROWS.has(scenario.id)) job(scenario.title, NODE, node, scenario);
  }
  if (parts.has('webdis') && targets.onPath('webdis')) {
    const webdis = await start(() => targets.startWebdis(redis.port, dir));
    job('GET string', 'baseline (c) webdis', webdis, {
      request: { method: 'GET', path: '/GET/bench:string' },
      opsPerRequest: 1,
    });
  } else if (parts.has('webdis')) {
    notes.push('baseline (c) webdis skipped: no `webdis` binary on the PATH');
  }
  const scenarios = SERVICE_SCENARIOS.filter((s) => parts.has(s.id));
  if (scenarios.length > 0) {
    const service = await start(() => targets.startService(serviceOptions(redis.url, dir, 1)));
    for (const scenario of scenarios) {
      if ((await probe(service.url, scenario, service.headers)) === 'missing') {
        const note = 'N/A: route not served (404 unknown_endpoint)';
        rows.push({ ...row(scenario.title, 'service', []), note });
      } else {
        job(scenario.title, 'service', service, scenario);
        if (scenario.id === 'get') job(ONE_CLIENT, 'service', service, scenario, 1, 1);
      }
    }
  }
  if (parts.has('workers') && options.pin) {
    notes.push('SVC_WORKERS=2 skipped: --pin puts every server on one CPU');
  } else if (parts.has('workers')) {
    const workers = await start(() => targets.startService(serviceOptions(redis.url, dir, 2)));
    job('GET string', 'service SVC_WORKERS=2', workers, GET_STRING, 2);
  }
  const stopAll = () => Promise.all(started.map((t) => t.server.stop()));
  return { jobs, rows, stopAll };
}

/** Service scenarios that baseline (b) also answers with the same Redis work, beside GET and the batch (REDIS_TARGETS). */
const PLAIN_ROWS: ReadonlySet<string> = new Set(['post', 'raw-get', 'upstash-get']);

/** The rows a target compares, in the order they run within a round: each next to the one it is compared with. */
const RUN_FIRST = [
  ['GET string', 'service SVC_WORKERS=2'],
  ['GET string', 'service'],
  ['GET string', EXPRESS],
  ['POST string', 'service'],
  [ONE_CLIENT, 'service'],
  [ONE_CLIENT, NODE],
  [BATCH.title, 'service'],
  [BATCH.title, NODE],
];

/** The jobs in the order they run in a round: RUN_FIRST's, then the others as listed (the table keeps its order). */
function runOrder(jobs: Job[]): Job[] {
  const rank = (j: Job) => {
    const i = RUN_FIRST.findIndex(([scenario, target]) => j.scenario === scenario && j.target === target);
    return i < 0 ? RUN_FIRST.length : i;
  };
  return [...jobs].sort((a, b) => rank(a) - rank(b));
}

/**
 * A warm-up of every job, then `rounds` rounds each running every job once: a machine that gets busier or
 * quieter during the run affects the baselines and the service alike. Each row is the job's median run.
 */
async function measureJobs(redis: RedisServer, dir: string, notes: string[]): Promise<Row[]> {
  const { jobs, rows, stopAll } = await startAll(redis, dir, notes);
  try {
    const measured = { ...load, warmup: 0 };
    const order = runOrder(jobs);
    const loadOf = (j: Job) => ({ ...measured, connections: j.connections ?? load.connections });
    for (const j of order)
      await measure(j.server, j.request, { ...loadOf(j), duration: load.warmup * j.processes });
    for (let round = 1; round <= options.rounds; round++) {
      log(`round ${round}/${options.rounds}: ${jobs.length} runs of ${load.duration} s`);
      // Every other round in reverse, so that running after another target weighs on each side alike.
      for (const j of round % 2 ? order : [...order].reverse())
        j.runs.push(await measure(j.server, j.request, loadOf(j)));
    }
  } finally {
    await stopAll();
  }
  const measuredRows = jobs.map((j) => row(j.scenario, j.target, j.runs, j.opsPerRequest));
  return [...measuredRows, ...rows];
}

/** Three consecutive GET runs on one fresh service process; RSS read right after each. */
async function memory(redisUrl: string, dir: string): Promise<MemoryRun[]> {
  const seconds = options.memorySeconds;
  return using(
    () => targets.startService(serviceOptions(redisUrl, dir, 1)).then(pinned),
    async (t) => {
      const runs: MemoryRun[] = [];
      for (let i = 0; i < 3; i++) {
        log(`memory: GET string run ${i + 1}/3 (${seconds} s)`);
        const m = await measure(t, GET_STRING.request, {
          ...load,
          duration: seconds,
          warmup: i ? 0 : load.warmup,
        });
        const rssAfterMb = rssNow(t.server.pid).processMb;
        runs.push({ seconds, reqPerSec: m.reqPerSec, maxRssMb: m.usage.processMb, rssAfterMb });
      }
      return runs;
    },
  );
}

async function measureAll(redis: RedisServer, dir: string): Promise<void> {
  const started = Date.now();
  const info = machine(); // before the load: the load average says how busy the machine already was
  const notes: string[] = [];
  const rows = await measureJobs(redis, dir, notes);
  addRatios(rows);
  // Queues: closed loops of send + receive + ack (messages/s), beside a plain client's stream commands.
  if (parts.has('queues')) notes.push(...(await queueLines(redis.url, dir, load.duration)));
  const memoryRuns = parts.has('memory') ? await memory(redis.url, dir) : [];
  if (!parts.has('memory')) notes.push('no memory runs in this run (--memory runs them alone)');
  const found = checks(rows, memoryRuns);
  const seconds = Math.round((Date.now() - started) / 1000);
  const settings = Object.entries(options.settings).map(([k, v]) => `${k}=${v}`);
  if (settings.length > 0) notes.push(`service settings changed: ${settings.join(' ')}`);
  if (options.nodeArgs.length > 0) notes.push(`service node options: ${options.nodeArgs.join(' ')}`);
  if (options.pin)
    notes.push(`--pin: every server on CPU ${SERVER_CPU}, the load generator and Redis on the others`);
  notes.push(`machine: ${info.nproc} CPUs (${info.cpu}), node ${info.node}, redis ${info.redis}`);
  notes.push(`load average at start ${info.loadavg.map((l) => l.toFixed(2)).join(' ')}; took ${seconds} s`);
  if (options.json) {
    const result = { machine: info, load, seconds, rows, memory: memoryRuns, checks: found, notes };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } else {
    process.stdout.write(formatText(rows, memoryRuns, found, notes));
  }
}

async function main(): Promise<void> {
  if (options.compare) {
    // Every service scenario but the 1 MiB GET unless --only names some (the parts that are not scenarios drop out).
    const only = SERVICE_SCENARIOS.map((s) => s.id).filter((id) => options.parts.has(id));
    const { duration, connections } = options.load;
    await compare(options.compare, { rounds: options.rounds, duration, connections, only }, log);
    return;
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true })); // also after Ctrl-C
  process.env.TEST_REDIS_TMPDIR = dir; // the helper puts redis-server's data dir there
  const redis = await startRedisServer();
  load = { ...load, redisPid: Number(readFileSync(path.join(redis.dir, 'redis.pid'), 'utf8')) };
  if (options.pin) for (const pid of [process.pid, load.redisPid as number]) pin(pid, OTHER_CPUS);
  const raw = new Redis(redis.url);
  try {
    for (const scenario of SERVICE_SCENARIOS) await scenario.seed?.(raw);
    if (options.profile) {
      const profileDir = process.env.BENCH_PROFILE_DIR ?? '/tmp/prof';
      // One longer run per scenario: a profile needs more samples than a round's run gives.
      const profileLoad = { ...load, duration: load.duration * options.rounds };
      await profileRun(serviceOptions(redis.url, dir, 1), profileLoad, profileDir, log, options.profiled);
    } else {
      await measureAll(redis, dir);
    }
  } finally {
    await raw.quit();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

process.on('SIGINT', () => process.exit(130)); // runs the 'exit' hook that kills the servers
main().catch((err) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
