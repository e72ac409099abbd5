// `node dist/bench/ab.js [options] VARIANT...`: compares service builds or settings by alternating short runs.
//
// A VARIANT is `name` or `name:item,item,...`, each item an environment variable NAME=value (SVC_* settings,
// or e.g. MALLOC_ARENA_MAX=2), a node option written
// node=--option (e.g. node=--max-semi-space-size=8), or the path of another build's main.js (for example
// dist/ab/before/src/main.js). Each variant's service is started once; then short
// runs of each scenario go round the variants `--rounds` times, so that a busy machine slows all of them alike.
// It prints, per scenario and variant, the median (and min) server CPU µs per request and the median req/s.
// `npm run bench -- --compare REF` (bench/compare.ts) runs the same against a build of a git ref.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { startRedisServer } from '../tests/support/redis-server';
import { type LoadOptions, median } from './load';
import { type Scenario, SERVICE_SCENARIOS } from './scenarios';
import { driveTarget, startService, type Target } from './targets';

const USAGE = `node dist/bench/ab.js [--rounds=8] [--duration=2] [--connections=50] [--only=get,post] VARIANT...
  VARIANT: name[:item,...], item = NAME=value (environment), node=--option or path/to/main.js`;

export interface Variant {
  name: string;
  main?: string;
  settings: Record<string, string>;
  nodeArgs: string[];
}

export function parseVariant(arg: string): Variant {
  const [name = '', items = ''] = arg.split(/:(.*)/s);
  const variant: Variant = { name, settings: {}, nodeArgs: [] };
  for (const item of items.split(',').filter(Boolean)) {
    const setting = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(item);
    if (setting) variant.settings[setting[1] as string] = setting[2] as string;
    else if (item.startsWith('node=')) variant.nodeArgs.push(item.slice('node='.length));
    else variant.main = path.resolve(item);
  }
  return variant;
}

/** One scenario on one variant: its runs' CPU µs per request and req/s, and the largest RSS seen. */
export interface AbResult {
  scenario: string;
  variant: string;
  cpuUs: number[];
  reqPerSec: number[];
  p50Ms: number[];
  maxRssMb: number;
}

export interface AbOptions {
  rounds: number;
  /** Seconds per run. */
  duration: number;
  /** Concurrent connections of the load (1: what a lone client waits). */
  connections: number;
  /** Scenario ids (bench/scenarios.ts). */
  only: string[];
  log: (line: string) => void;
}

const run = (t: Target, s: Scenario, opts: LoadOptions) => driveTarget(t, s.request, opts);

/** Starts one service per variant on a Redis of its own, alternates the runs, stops everything. */
export async function alternate(variants: Variant[], opts: AbOptions): Promise<AbResult[]> {
  const load = { connections: opts.connections, duration: opts.duration, warmup: 0 };
  const scenarios = SERVICE_SCENARIOS.filter((s) => opts.only.includes(s.id));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-ab-'));
  process.env.TEST_REDIS_TMPDIR = dir;
  const redis = await startRedisServer();
  const raw = new Redis(redis.url);
  const targets: Target[] = [];
  try {
    for (const scenario of scenarios) await scenario.seed?.(raw);
    for (const v of variants) {
      const logFile = path.join(dir, `${v.name}.log`);
      targets.push(
        await startService({
          redisUrl: redis.url,
          workers: 1,
          logFile,
          main: v.main,
          settings: v.settings,
          nodeArgs: v.nodeArgs,
        }),
      );
    }
    const results = new Map<string, AbResult>();
    const warm = { ...load, duration: 1 };
    for (const t of targets) for (const s of scenarios) await run(t, s, warm);
    for (let round = 0; round < opts.rounds; round++) {
      for (const s of scenarios) {
        // Every other round in reverse, so that running after the other variant weighs on each alike.
        const order = [...targets.entries()];
        for (const [i, t] of round % 2 ? order.reverse() : order) {
          const m = await run(t, s, load);
          const variant = variants[i]?.name ?? '';
          const key = `${s.title}\t${variant}`;
          const r = results.get(key) ?? {
            scenario: s.title,
            variant,
            cpuUs: [],
            reqPerSec: [],
            p50Ms: [],
            maxRssMb: 0,
          };
          r.cpuUs.push((m.usage.cpuPercent / 100 / m.reqPerSec) * 1e6);
          r.reqPerSec.push(m.reqPerSec);
          r.p50Ms.push(m.p50Ms);
          r.maxRssMb = Math.max(r.maxRssMb, m.usage.processMb);
          results.set(key, r);
        }
      }
      opts.log(`round ${round + 1}/${opts.rounds}`);
    }
    // In scenario order, each scenario's variants in the order given.
    return [...results.values()].sort(
      (a, b) =>
        scenarios.findIndex((s) => s.title === a.scenario) -
        scenarios.findIndex((s) => s.title === b.scenario),
    );
  } finally {
    for (const t of targets) await t.server.stop();
    await raw.quit();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const formatAb = (results: AbResult[]): string =>
  [
    'scenario\tvariant\tCPU µs/req median (min)\treq/s median\tp50 ms median\tmax RSS MB',
    ...results.map(
      (r) =>
        `${r.scenario}\t${r.variant}\t${median(r.cpuUs).toFixed(0)} (${Math.min(...r.cpuUs).toFixed(0)})\t${median(r.reqPerSec).toFixed(0)}\t${median(r.p50Ms).toFixed(3)}\t${r.maxRssMb.toFixed(0)}`,
    ),
  ].join('\n');

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const value = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const variants = args.filter((a) => !a.startsWith('--')).map(parseVariant);
  if (variants.length === 0 || args.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(variants.length === 0 ? 2 : 0);
  }
  const results = await alternate(variants, {
    rounds: Number(value('rounds') ?? 8),
    duration: Number(value('duration') ?? 2),
    connections: Number(value('connections') ?? 50),
    only: (value('only') ?? 'get,post').split(','),
    log: (line) => process.stderr.write(`ab: ${line}\n`),
  });
  process.stdout.write(`${formatAb(results)}\n`);
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`ab failed: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  });
}
