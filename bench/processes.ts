// The servers under test, each its own child process (so RSS is per process), and RSS and CPU sampling from /proc.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';

const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 20_000;
const MB = 1024 * 1024;
/** Linux's USER_HZ: /proc reports CPU time in 1/100 s. */
const CLOCK_TICKS = 100;

export interface ServerSpec {
  name: string;
  /** Executable and arguments, e.g. [process.execPath, 'dist/src/main.js']. */
  command: string[];
  env: Record<string, string>;
  /** Where the server's stdout goes (its request log); /dev/null when not given. */
  logFile?: string;
  /** Resolves true once the server serves. */
  ready: () => Promise<boolean>;
}

export interface ServerProcess {
  readonly name: string;
  readonly pid: number;
  stop(): Promise<void>;
}

// Whatever this run started (servers, their cluster workers, redis-server) must not outlive it.
process.on('exit', () => {
  for (const pid of processTree(process.pid).slice(1)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {} // already gone
  }
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Spawns the server and waits until `ready()`; a server that exits first fails with its stderr. */
export async function startServer(spec: ServerSpec): Promise<ServerProcess> {
  const out = openSync(spec.logFile ?? '/dev/null', 'a');
  const [file = '', ...args] = spec.command;
  const child = spawn(file, args, { env: spec.env, stdio: ['ignore', out, 'pipe'] });
  closeSync(out);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await spec.ready().catch(() => false))) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${spec.name} did not start (${spec.command.join(' ')}):\n${stderr}`);
    }
    await sleep(100);
  }
  return {
    name: spec.name,
    pid: child.pid as number,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
      if (child.exitCode !== 0 && stderr) process.stderr.write(`${spec.name} stderr:\n${stderr}\n`);
    },
  };
}

/** True when something answers HTTP at `url` (any status). */
export async function answers(url: string, headers: Record<string, string> = {}): Promise<boolean> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(2000) });
  await res.arrayBuffer();
  return true;
}

/** RSS in bytes of one process, 0 when it is gone. */
function rssOf(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The pid and all its descendants (cluster workers), found through the parent pid in /proc/<pid>/stat. */
export function processTree(root: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {} // the process ended while we looked
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(parents.get(tree[i] as number) ?? []));
  return tree;
}

export interface Rss {
  /** The largest single process, MB. */
  processMb: number;
  /** All processes of the tree together, MB. */
  totalMb: number;
}

export function rssNow(root: number): Rss {
  const each = processTree(root).map(rssOf);
  return { processMb: Math.max(0, ...each) / MB, totalMb: each.reduce((a, b) => a + b, 0) / MB };
}

/** CPU seconds (user + system) a process has used so far, null when it is gone. */
function cpuOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS; // utime, stime (fields 14 and 15)
  } catch {
    return null;
  }
}

export interface Usage extends Rss {
  /** CPU the tree used during the sampling, in % of one core. */
  cpuPercent: number;
}

/** Samples the tree every 250 ms until stopped: the largest RSS seen, and the CPU it used meanwhile. */
export function sampleProcess(root: number): { stop(): Usage } {
  let pids = processTree(root);
  const max: Rss = { processMb: 0, totalMb: 0 };
  const cpu = new Map<number, { first: number; last: number }>();
  const started = Date.now();
  let first = true;
  const tick = () => {
    const each = pids.map(rssOf);
    max.processMb = Math.max(max.processMb, ...each.map((b) => b / MB));
    max.totalMb = Math.max(max.totalMb, each.reduce((a, b) => a + b, 0) / MB);
    for (const pid of pids) {
      const used = cpuOf(pid);
      if (used === null) continue;
      const known = cpu.get(pid);
      if (known) known.last = used;
      // A worker that appears later (a replacement) used all its CPU during the sampling.
      else cpu.set(pid, { first: first ? used : 0, last: used });
    }
    first = false;
  };
  tick();
  let ticks = 0;
  const timer = setInterval(() => {
    if (++ticks % 8 === 0) pids = processTree(root); // a replaced worker shows up within 2 s
    tick();
  }, 250);
  return {
    stop() {
      clearInterval(timer);
      tick();
      const seconds = [...cpu.values()].reduce((a, c) => a + c.last - c.first, 0);
      return { ...max, cpuPercent: (seconds / ((Date.now() - started) / 1000)) * 100 };
    },
  };
}

/**
 * Pins every thread of `pid` to CPUs `cpus` (`taskset`, util-linux). Returns false where taskset is missing or the
 * machine has a single CPU.
 */
export function pinCpus(pid: number, cpus: string): boolean {
  const done = spawnSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cpus, String(pid)], {
    stdio: 'ignore',
  });
  return done.status === 0;
}
