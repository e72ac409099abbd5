// `node dist/bench/ab.js [options] VARIANT...`: compares service builds or settings by alternating short runs.
//
// A VARIANT is `name` or `name:item,item,...`, each item a SVC_NAME=value setting, a node option written
// node=--option (e.g. node=--max-semi-space-size=8), or the path of another build's main.js (for example
// dist/ab/before/src/main.js). Each variant's service is started once; then short
// runs of each scenario go round the variants `--rounds` times, so that a busy machine slows all of them alike.
// It prints, per scenario and variant, the median (and min) server CPU µs per request and the median req/s.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { startRedisServer } from '../tests/support/redis-server';
import { type LoadOptions, median } from './load';
import { type Scenario, SERVICE_SCENARIOS } from './scenarios';
import { driveTarget, startService, type Target } from './targets';

const USAGE = `node dist/bench/ab.js [--rounds=8] [--duration=2] [--only=get,post] VARIANT...
  VARIANT: name[:item,...], item = SVC_NAME=value, node=--option or path/to/main.js`;

interface Variant {
  name: string;
  main?: string;
  settings: Record<string, string>;
  nodeArgs: string[];
}

function parseVariant(arg: string): Variant {
  const [name = '', items = ''] = arg.split(/:(.*)/s);
  const variant: Variant = { name, settings: {}, nodeArgs: [] };
  for (const item of items.split(',').filter(Boolean)) {
    const setting = /^(SVC_\w+)=(.*)$/.exec(item);
    if (setting) variant.settings[setting[1] as string] = setting[2] as string;
    else if (item.startsWith('node=')) variant.nodeArgs.push(item.slice('node='.length));
    else variant.main = path.resolve(item);
  }
  return variant;
}

const run = (t: Target, s: Scenario, opts: LoadOptions) => driveTarget(t, s.request, opts);

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const value = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const variants = args.filter((a) => !a.startsWith('--')).map(parseVariant);
  if (variants.length === 0 || args.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(variants.length === 0 ? 2 : 0);
  }
  const rounds = Number(value('rounds') ?? 8);
  const load = { connections: 50, duration: Number(value('duration') ?? 2), warmup: 0 };
  const only = (value('only') ?? 'get,post').split(',');
  const scenarios = SERVICE_SCENARIOS.filter((s) => only.includes(s.id));

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
    const cpu = new Map<string, number[]>();
    const rps = new Map<string, number[]>();
    const rss = new Map<string, number>();
    const warm = { ...load, duration: 1 };
    for (const t of targets) for (const s of scenarios) await run(t, s, warm);
    for (let round = 0; round < rounds; round++) {
      for (const s of scenarios) {
        for (const [i, t] of targets.entries()) {
          const m = await run(t, s, load);
          const key = `${s.title}\t${variants[i]?.name}`;
          cpu.set(key, [...(cpu.get(key) ?? []), (m.usage.cpuPercent / 100 / m.reqPerSec) * 1e6]);
          rps.set(key, [...(rps.get(key) ?? []), m.reqPerSec]);
          rss.set(key, Math.max(rss.get(key) ?? 0, m.usage.processMb));
        }
      }
      process.stderr.write(`ab: round ${round + 1}/${rounds}\n`);
    }
    process.stdout.write('scenario\tvariant\tCPU µs/req median (min)\treq/s median\tmax RSS MB\n');
    for (const [key, xs] of cpu)
      process.stdout.write(
        `${key}\t${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)})\t${median(rps.get(key) ?? []).toFixed(0)}\t${rss.get(key)?.toFixed(0)}\n`,
      );
  } finally {
    for (const t of targets) await t.server.stop();
    await raw.quit();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`ab failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
