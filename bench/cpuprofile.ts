// Summarises a V8 .cpuprofile: self time per function and per package group (ours, Express, ioredis, winston...).
// CLI: node dist/bench/cpuprofile.js <file.cpuprofile> [--top N]
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; scriptId: string | number };
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const GROUPS: Record<string, string[]> = {
  express: [
    'express',
    'router',
    'body-parser',
    'raw-body',
    'finalhandler',
    'on-finished',
    'type-is',
    'content-type',
  ]
    .concat([
      'media-typer',
      'mime-types',
      'mime-db',
      'accepts',
      'negotiator',
      'qs',
      'send',
      'parseurl',
      'statuses',
    ])
    .concat([
      'http-errors',
      'iconv-lite',
      'bytes',
      'vary',
      'proxy-addr',
      'forwarded',
      'ipaddr.js',
      'fresh',
      'etag',
    ])
    .concat([
      'path-to-regexp',
      'depd',
      'encodeurl',
      'escape-html',
      'cookie',
      'setprototypeof',
      'merge-descriptors',
    ]),
  ioredis: ['ioredis', 'redis-parser', 'redis-errors', 'denque', 'standard-as-callback', 'cluster-key-slot'],
  winston: [
    'winston',
    'logform',
    'triple-beam',
    'winston-transport',
    'readable-stream',
    'safe-stable-stringify',
  ].concat([
    'fecha',
    '@colors/colors',
    'colorspace',
    'one-time',
    'stack-trace',
    'string_decoder',
    '@dabh/diagnostics',
  ]),
  ajv: ['ajv', 'fast-deep-equal', 'fast-uri', 'json-schema-traverse'],
  'rate limit': ['express-rate-limit', 'rate-limit-redis'],
  'prom-client': ['prom-client', 'tdigest', 'bintrees'],
};
const GROUP_OF = new Map(
  Object.entries(GROUPS).flatMap(([group, pkgs]) => pkgs.map((p): [string, string] => [p, group])),
);

/** Groups whose time is attributed to whoever called them. */
const LOW_LEVEL = new Set(['native', 'node core', 'v8 (program)']);

/** The package group a frame belongs to: ours (src/), a library group, node core, or V8 itself. */
export function category(url: string, functionName: string, scriptId: string | number = 0): string {
  // Code from new Function() has a script but no URL: AJV's compiled validators.
  if (!url && Number(scriptId) !== 0) return 'ajv';
  if (!url) {
    if (functionName === '(garbage collector)') return 'gc';
    if (functionName === '(idle)') return 'idle';
    return functionName === '(program)' ? 'v8 (program)' : 'native';
  }
  if (url.startsWith('node:')) return 'node core';
  const pkg = [...url.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)].pop()?.[1];
  if (pkg) return GROUP_OF.get(pkg) ?? `other: ${pkg}`;
  return /\/(dist\/)?(src|bench)\//.test(url) ? 'ours' : 'other';
}

const shortUrl = (url: string) =>
  url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(dist\/)?(?=src\/)/, '');

export interface Summary {
  /** Sampled time that was not idle, ms. */
  busyMs: number;
  idleMs: number;
  /**
   * Per group: `selfMs` in its own functions; `attributedMs` adds the node core and native work it called
   * (each sample goes to the nearest frame on its stack outside node core and native code: a socket write
   * issued by ioredis counts for ioredis); `inclusiveMs`: samples with the group anywhere on the stack.
   */
  groups: { group: string; selfMs: number; attributedMs: number; inclusiveMs: number }[];
  functions: { name: string; group: string; selfMs: number }[];
}

/** Self time from samples and timeDeltas; only samples inside `windowUs` (profile clock, µs) when given. */
export function summarise(profile: CpuProfile, windowUs?: [number, number]): Summary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i] ?? 0;
    if (windowUs && (t < windowUs[0] || t > windowUs[1])) return;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  });
  const groups = new Map<string, { selfMs: number; attributedMs: number; inclusiveMs: number }>();
  const entry = (group: string) => {
    const found = groups.get(group) ?? { selfMs: 0, attributedMs: 0, inclusiveMs: 0 };
    groups.set(group, found);
    return found;
  };
  const fns = new Map<string, { name: string; group: string; selfMs: number }>();
  let idleMs = 0;
  for (const [id, us] of self) {
    const node = byId.get(id) as ProfileNode;
    const { functionName, url, lineNumber } = node.callFrame;
    const group = category(url, functionName, node.callFrame.scriptId);
    const ms = us / 1000;
    if (group === 'idle') {
      idleMs += ms;
      continue;
    }
    entry(group).selfMs += ms;
    const stack: string[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = (byId.get(at) as ProfileNode).callFrame;
      stack.push(category(frame.url, frame.functionName, frame.scriptId));
    }
    for (const g of new Set(stack)) entry(g).inclusiveMs += ms;
    entry(stack.find((g) => !LOW_LEVEL.has(g)) ?? group).attributedMs += ms;
    const name = `${functionName || '(anonymous)'} ${url ? `${shortUrl(url)}:${lineNumber + 1}` : ''}`.trim();
    const f = fns.get(name) ?? { name, group, selfMs: 0 };
    f.selfMs += ms;
    fns.set(name, f);
  }
  const busyMs = [...groups.values()].reduce((a, g) => a + g.selfMs, 0);
  return {
    busyMs,
    idleMs,
    groups: [...groups].map(([group, g]) => ({ group, ...g })).sort((a, b) => b.selfMs - a.selfMs),
    functions: [...fns.values()].sort((a, b) => b.selfMs - a.selfMs),
  };
}

export function formatSummary(s: Summary, top = 25): string {
  const pct = (ms: number) => `${((ms / s.busyMs) * 100).toFixed(1).padStart(5)} %`;
  const lines = [`busy ${s.busyMs.toFixed(0)} ms, idle ${s.idleMs.toFixed(0)} ms`, ''];
  lines.push('self     attrib.  incl.    group');
  for (const g of s.groups.filter((g) => g.inclusiveMs >= s.busyMs / 1000)) {
    lines.push(`${pct(g.selfMs)}  ${pct(g.attributedMs)}  ${pct(g.inclusiveMs)}  ${g.group}`);
  }
  lines.push('', 'self    group          function');
  for (const f of s.functions.slice(0, top)) lines.push(`${pct(f.selfMs)}  ${f.group.padEnd(13)}  ${f.name}`);
  return `${lines.join('\n')}\n`;
}

if (require.main === module) {
  const [file, flag, n] = process.argv.slice(2);
  if (!file) throw new Error('usage: node dist/bench/cpuprofile.js <file.cpuprofile> [--top N]');
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  process.stdout.write(formatSummary(summarise(profile), flag === '--top' ? Number(n) : 25));
}
