// The benchmark's command line: `npm run bench -- [options]`.
import type { LoadOptions } from './load';

export const USAGE = `npm run bench -- [options]
  --quick              2 rounds of 1.5 s runs after a 1 s warm-up (default 3 rounds of 4 s after 2 s); no memory runs
  --json               print the results as JSON instead of a table
  --memory             only the memory check: three consecutive GET runs (20 s, 5 s with --quick)
  --only=a,b           only these parts: express, node, webdis, get, post, hash, large (only when named), member,
                       incr, leaderboard, batch, upstash, upstash-get, upstash-hash, workers, queues, memory
  --set NAME=VALUE     an extra service setting, e.g. --set SVC_RATE_LIMIT_ENABLED=false (repeatable)
  --node=OPTION        a node option for the service, e.g. --node=--max-old-space-size=1024 (repeatable)
  --rounds=N           how many times the runs go round the targets and scenarios (the median run is reported)
  --duration=S         seconds per measured run (per round)
  --connections=N      concurrent keep-alive connections (default 50)
  --pin                as the issue's own measurements: each server (the baselines, the service) on the last CPU,
                       the load generator and Redis on the others (taskset); no workers part; not with --compare
                       or --profile
  --profile            CPU profiles (node --cpu-prof) of GET, POST and batch, or --only's; BENCH_PROFILE_DIR (/tmp/prof)
  --compare REF        this build against a build of git ref REF (e.g. main): alternated 2 s runs of every service
                       scenario (or --only's), 6 rounds (--rounds), printing both CPU µs per request`;

export const PARTS = [
  'express',
  'node',
  'webdis',
  'get',
  'post',
  'hash',
  'large',
  'member',
  'incr',
  'leaderboard',
  'batch',
  'raw-get',
  'raw-put',
  'upstash',
  'upstash-get',
  'upstash-hash',
  'workers',
  'queues',
  'memory',
];

export interface Options {
  quick: boolean;
  json: boolean;
  profile: boolean;
  /** The scenarios --profile profiles: --only's, else GET, POST and the batch. */
  profiled: string[];
  /** Servers on the last CPU, the load generator and Redis on the others (bench/processes.ts pinCpus). */
  pin: boolean;
  /** A git ref to compare this build with (bench/compare.ts). */
  compare?: string;
  /** The parts to run. */
  parts: Set<string>;
  /** Extra SVC_* settings for the service. */
  settings: Record<string, string>;
  /** Node options for the service's processes (V8 heap sizes, ...). */
  nodeArgs: string[];
  load: LoadOptions;
  /** Each target and scenario is measured once per round, the rounds alternating them (median reported). */
  rounds: number;
  memorySeconds: number;
}

export function parseOptions(args: string[]): Options {
  const flags = new Set(args);
  const value = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const quick = flags.has('--quick');
  const settings: Record<string, string> = {};
  args.forEach((arg, i) => {
    if (arg !== '--set') return;
    const [name, ...rest] = (args[i + 1] ?? '').split('=');
    if (!name?.startsWith('SVC_') || rest.length === 0)
      throw new Error(`--set needs SVC_NAME=VALUE\n${USAGE}`);
    settings[name] = rest.join('=');
  });
  const only = value('only')?.split(',');
  const at = args.indexOf('--compare');
  const compare = value('compare') ?? (at >= 0 ? args[at + 1] : undefined);
  if (at >= 0 && (!compare || compare.startsWith('--')))
    throw new Error(`--compare needs a git ref\n${USAGE}`);
  for (const part of only ?? []) if (!PARTS.includes(part)) throw new Error(`unknown part ${part}\n${USAGE}`);
  if (flags.has('--pin') && (compare || flags.has('--profile')))
    throw new Error(`--pin is for the table and the memory runs, not --compare or --profile\n${USAGE}`);
  const parts = new Set(
    // 'large' only when named: its 1 MiB buffers stay in the service's RSS, which every later run would report.
    only ??
      (flags.has('--memory') ? ['memory'] : PARTS.filter((p) => p !== 'large' && (p !== 'memory' || !quick))),
  );
  return {
    quick,
    json: flags.has('--json'),
    profile: flags.has('--profile'),
    profiled: only ?? ['get', 'post', 'batch'],
    pin: flags.has('--pin'),
    compare,
    parts,
    settings,
    nodeArgs: args.filter((a) => a.startsWith('--node=')).map((a) => a.slice('--node='.length)),
    load: {
      connections: Number(value('connections') ?? 50),
      duration: Number(value('duration') ?? (compare ? 2 : quick ? 1.5 : 4)),
      warmup: quick ? 1 : 2,
    },
    rounds: Number(value('rounds') ?? (compare ? 6 : quick ? 2 : 3)),
    memorySeconds: Number(value('duration') ?? (quick ? 5 : 20)),
  };
}
