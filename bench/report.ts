// The benchmark's results: rows with ratios to the baselines, the issue's targets checked, as a table or JSON.
import { availableParallelism } from 'node:os';
import { type Measurement, median, medianRun } from './load';

export interface Row {
  scenario: string;
  target: string;
  /** null when the scenario could not run (N/A: its route is not served). */
  reqPerSec: number | null;
  opsPerSec: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
  /** Largest RSS of one process during the run (each cluster worker is its own process). */
  maxRssMb: number | null;
  /** req/s divided by baseline (a)'s / (b)'s GET req/s. */
  vsExpress: number | null;
  vsNode: number | null;
  /** CPU used during the run, % of one core: the server (all its processes) and the load generator. */
  serverCpuPercent: number | null;
  loadgenCpuPercent: number | null;
  redisCpuPercent: number | null;
  /** Server CPU time per request, µs: steadier than req/s when other work shares the machine. */
  cpuUsPerRequest: number | null;
  /** req/s of each round's run, in round order: a ratio pairs the runs of the same round (see `ratio`). */
  rounds: number[];
  note?: string;
}

export interface MemoryRun {
  seconds: number;
  reqPerSec: number;
  rssAfterMb: number;
  maxRssMb: number;
}

export interface Check {
  target: string;
  measured: string;
  /** null: the target does not apply to this machine (printed N/A, with what the run measured instead). */
  pass: boolean | null;
}

/** The CPUs a row's run used, of what the machine has: server, Redis and load generator (% of one CPU each). */
function cpuBudget(r: Row, cpus: number): string {
  const pct = (n: number | null) => (n === null ? '?' : fmt(n));
  const used = (r.serverCpuPercent ?? 0) + (r.redisCpuPercent ?? 0) + (r.loadgenCpuPercent ?? 0);
  return `service ${pct(r.serverCpuPercent)} % + redis ${pct(r.redisCpuPercent)} % + load generator ${pct(
    r.loadgenCpuPercent,
  )} % = ${fmt(used)} % of ${cpus * 100} %`;
}

/** Below this many CPUs a second worker has no core of its own: the service, Redis and the load share them. */
export const WORKERS_MIN_CPUS = 4;

/** The scenario of one client alone (one connection): its p50 is what a lone client waits. */
export const ONE_CLIENT = 'GET string, 1 client';

/** A row from a job's runs (one per round; none when the scenario could not run). */
export function row(scenario: string, target: string, runs: Measurement[], opsPerRequest = 1): Row {
  const none = { reqPerSec: null, opsPerSec: null, p50Ms: null, p99Ms: null, maxRssMb: null };
  const noCpu = {
    serverCpuPercent: null,
    loadgenCpuPercent: null,
    redisCpuPercent: null,
    cpuUsPerRequest: null,
  };
  const base = { scenario, target, vsExpress: null, vsNode: null, rounds: runs.map((r) => r.reqPerSec) };
  if (runs.length === 0) return { ...base, ...none, ...noCpu };
  const m = medianRun(runs);
  const invalid = m.non2xx + m.errors > 0 ? `INVALID: ${m.non2xx} non-2xx, ${m.errors} errors` : undefined;
  return {
    ...base,
    reqPerSec: m.reqPerSec,
    opsPerSec: m.reqPerSec * opsPerRequest,
    p50Ms: m.p50Ms,
    p99Ms: m.p99Ms,
    maxRssMb: m.usage.processMb,
    serverCpuPercent: m.usage.cpuPercent,
    loadgenCpuPercent: m.loadgenCpuPercent,
    redisCpuPercent: m.redisCpuPercent ?? null,
    cpuUsPerRequest: (m.usage.cpuPercent / 100 / m.reqPerSec) * 1e6,
    ...(invalid ? { note: invalid } : {}),
  };
}

/**
 * req/s of `r` over `base`'s: the median over the rounds of the two runs' ratio in each round, so that the VM
 * getting faster or slower between rounds does not count (the runs of a round are seconds apart); the ratio of
 * the medians when the rows have no runs in common.
 */
export function ratio(r: Row, base?: Row): number | null {
  if (r.reqPerSec === null || !base?.reqPerSec) return null;
  const paired = r.rounds.length > 0 && r.rounds.length === base.rounds.length;
  return paired
    ? median(r.rounds.map((rps, i) => rps / (base.rounds[i] as number)))
    : r.reqPerSec / base.reqPerSec;
}

/**
 * Issue 36: Redis's CPU per request (`redis µs/req`) of a service scenario at most this many times that of baseline
 * (b) doing the same Redis work with the same batching (GET + PTTL, one SET, one GET, the floor's batch), by title.
 */
export const REDIS_TARGETS: Readonly<Record<string, number>> = {
  'GET string': 1.5,
  'POST string': 2,
  'GET string bytes (64 KiB, octet-stream)': 1.5,
  'Upstash GET string': 1.3,
  'string batch (100 sets)': 1.2,
};

/** Redis's CPU µs per request of a row (its redis CPU % over its req/s), or null. */
export const redisUsPerRequest = (r: Row): number | null =>
  r.redisCpuPercent === null || !r.reqPerSec ? null : (r.redisCpuPercent / 100 / r.reqPerSec) * 1e6;

export const EXPRESS = 'baseline (a) express';
export const NODE = 'baseline (b) node+ioredis';

/**
 * Fills the ratio columns: each row against (a)'s GET, and against (b)'s row of the same scenario where (b) runs it
 * (the batch: its floor), else (b)'s GET.
 */
export function addRatios(rows: Row[]): void {
  const rounded = (n: number | null) => (n === null ? null : round(n, 2));
  const base = (target: string, scenario: string) =>
    rows.find((r) => r.target === target && r.scenario === scenario);
  for (const r of rows) {
    r.vsExpress = rounded(ratio(r, base(EXPRESS, 'GET string')));
    r.vsNode = rounded(ratio(r, base(NODE, r.scenario) ?? base(NODE, 'GET string')));
  }
}

const round = (n: number, digits = 0) => Math.round(n * 10 ** digits) / 10 ** digits;
const fmt = (n: number | null, digits = 0) =>
  n === null
    ? 'N/A'
    : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** The issue's targets, measured against this run. */
export function checks(rows: Row[], memory: MemoryRun[], cpus = availableParallelism()): Check[] {
  const find = (scenario: string, target = 'service') =>
    rows.find((r) => r.scenario === scenario && r.target === target && r.reqPerSec !== null);
  const express = find('GET string', EXPRESS);
  const out: Check[] = [];
  for (const name of ['GET string', 'POST string']) {
    const r = find(name);
    const speed = r && ratio(r, express);
    if (!r || !speed || !express?.p99Ms) continue;
    // Issue 36: GET and POST "still at least 1.3 x Express hello" (issue 24 asked 1.0 x).
    out.push({
      target: `${name}: req/s >= 1.3 x (a)`,
      measured: `${speed.toFixed(2)} x`,
      pass: speed >= 1.3,
    });
    const tail = (r.p99Ms as number) / express.p99Ms;
    out.push({ target: `${name}: p99 <= 2 x (a)`, measured: `${tail.toFixed(2)} x`, pass: tail <= 2 });
  }
  const lone = find(ONE_CLIENT);
  const loneBase = find(ONE_CLIENT, NODE);
  if (lone?.p50Ms && loneBase?.p50Ms) {
    const wait = lone.p50Ms / loneBase.p50Ms;
    out.push({
      // Issue 36: "a lone client at most 1.5 x node:http + ioredis" (issue 24 asked 2 x).
      target: `${ONE_CLIENT}: p50 <= 1.5 x (b)`,
      measured: `${lone.p50Ms.toFixed(3)} ms, ${wait.toFixed(2)} x`,
      pass: wait <= 1.5,
    });
  }
  const batch = rows.find(
    (r) => r.scenario.startsWith('string batch') && r.target === 'service' && r.opsPerSec,
  );
  if (batch) {
    const ops = batch.opsPerSec as number;
    // The least an atomic, type-checked batch costs on this machine (baseline-node.ts), when it ran.
    const floor = find(batch.scenario, NODE);
    const of = floor?.opsPerSec ? `; floor (b) ${fmt(floor.opsPerSec)} ops/s, ${cpuBudget(floor, cpus)}` : '';
    // Issue 36 replaced 250,000 ops/s (above what this stack does on 2 cores) with the floor's own pace.
    const pace = floor?.opsPerSec ? ops / floor.opsPerSec : null;
    out.push({
      target: 'string batch: ops/s >= 0.8 x the floor (b)',
      measured: `${fmt(ops)} ops/s${pace === null ? '' : `, ${pace.toFixed(2)} x`} (${cpuBudget(batch, cpus)})${of}`,
      pass: pace === null ? null : pace >= 0.8,
    });
  }
  for (const [name, most] of Object.entries(REDIS_TARGETS)) {
    const mine = find(name);
    const plain = find(name, NODE);
    const [us, base] = [mine && redisUsPerRequest(mine), plain && redisUsPerRequest(plain)];
    if (!us || !base) continue;
    out.push({
      target: `${name}: redis µs/req <= ${most} x (b)`,
      measured: `${fmt(us, 1)} vs ${fmt(base, 1)} µs, ${(us / base).toFixed(2)} x`,
      pass: us / base <= most,
    });
  }
  const single = find('GET string');
  const workers = find('GET string', 'service SVC_WORKERS=2');
  const gain = workers && ratio(workers, single);
  if (gain && workers) {
    // The issue's rule: more than one process where there are spare cores; on fewer, say what limits it.
    const spare = cpus >= WORKERS_MIN_CPUS;
    out.push({
      target: `SVC_WORKERS=2: >= 1.3 x one process${spare ? '' : ` (with ${WORKERS_MIN_CPUS}+ CPUs)`}`,
      measured: `${gain.toFixed(2)} x${spare ? '' : `; ${cpus} CPUs full: ${cpuBudget(workers, cpus)}`}`,
      pass: spare ? gain >= 1.3 : null,
    });
  }
  const services = rows.filter((r) => r.target.startsWith('service') && r.maxRssMb !== null);
  const rssValues = [...services.map((r) => r.maxRssMb as number), ...memory.map((m) => m.maxRssMb)];
  if (rssValues.length > 0) {
    const top = Math.max(...rssValues);
    out.push({ target: 'RSS <= 160 MB per process', measured: `${fmt(top, 1)} MB max`, pass: top <= 160 });
  }
  const last = memory.at(-1);
  if (last) {
    out.push({
      target: 'RSS <= 128 MB after the memory runs',
      measured: `${fmt(last.rssAfterMb, 1)} MB`,
      pass: last.rssAfterMb <= 128,
    });
  }
  if (memory.length === 3) {
    const [first, , last] = memory as [MemoryRun, MemoryRun, MemoryRun];
    const growth = (last.rssAfterMb / first.rssAfterMb - 1) * 100;
    out.push({
      target: `RSS growth over 3 x ${first.seconds} s GET runs <= 10 %`,
      measured: `${fmt(first.rssAfterMb, 1)} -> ${fmt(last.rssAfterMb, 1)} MB (${growth >= 0 ? '+' : ''}${fmt(growth, 1)} %)`,
      pass: growth <= 10,
    });
  }
  for (const r of rows) {
    if (r.note?.startsWith('INVALID'))
      out.push({ target: `${r.scenario} on ${r.target}`, measured: r.note, pass: false });
  }
  return out;
}

function table(header: string[], lines: string[][], rightFrom: number): string {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const pad = (cells: string[]) =>
    cells.map((c, i) => (i >= rightFrom ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join('  ');
  return [pad(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(pad)].join('\n');
}

export function formatText(rows: Row[], memory: MemoryRun[], found: Check[], notes: string[]): string {
  const header = [
    'scenario',
    'target',
    'req/s',
    'ops/s',
    'p50 ms',
    'p99 ms',
    'max RSS MB',
    'vs (a)',
    'vs (b)',
    'CPU %',
    'CPU µs/req',
    'loadgen CPU %',
    'redis CPU %',
    // Redis's CPU per request: what bounds a fleet of gateway instances in front of one Redis (one core).
    'redis µs/req',
  ];
  const lines = rows.map((r) => [
    r.scenario,
    r.target,
    fmt(r.reqPerSec),
    fmt(r.opsPerSec),
    fmt(r.p50Ms, 2),
    fmt(r.p99Ms, 2),
    fmt(r.maxRssMb, 1),
    fmt(r.vsExpress, 2),
    fmt(r.vsNode, 2),
    fmt(r.serverCpuPercent),
    fmt(r.cpuUsPerRequest),
    fmt(r.loadgenCpuPercent),
    fmt(r.redisCpuPercent),
    fmt(redisUsPerRequest(r), 1),
  ]);
  const parts = lines.length > 0 ? [table(header, lines, 2)] : [];
  const rowNotes = rows.filter((r) => r.note).map((r) => `${r.scenario} (${r.target}): ${r.note}`);
  if (memory.length > 0) {
    const memLines = memory.map((m, i) => [
      String(i + 1),
      fmt(m.reqPerSec),
      fmt(m.maxRssMb, 1),
      fmt(m.rssAfterMb, 1),
    ]);
    parts.push(table(['memory run', 'req/s', 'max RSS MB', 'RSS after MB'], memLines, 1));
  }
  if (found.length > 0) {
    parts.push(
      found
        .map((c) => `${c.pass === null ? 'N/A ' : c.pass ? 'PASS' : 'FAIL'}  ${c.target}: ${c.measured}`)
        .join('\n'),
    );
  }
  const allNotes = [...rowNotes, ...notes];
  if (allNotes.length > 0) parts.push(allNotes.map((n) => `note: ${n}`).join('\n'));
  return `${parts.join('\n\n')}\n`;
}
