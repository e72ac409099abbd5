// `npm run bench -- --compare REF`: this build against a build of git ref REF, by alternated runs (bench/ab.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type AbResult, alternate } from './ab';
import { median } from './load';

const ROOT = path.join(__dirname, '..', '..');
const THIS_MAIN = path.join(__dirname, '..', 'src', 'main.js');

const git = (args: string[], cwd = ROOT) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/**
 * Checks REF out into a temporary worktree and builds it there (its own `npm run build`): node_modules is this
 * checkout's when both lock files agree, else `npm ci` installs REF's own. Returns its main.js and a cleanup.
 */
export function buildRef(ref: string, log: (line: string) => void): { main: string; remove: () => void } {
  const commit = git(['rev-parse', '--verify', `${ref}^{commit}`]);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-compare-'));
  rmSync(dir, { recursive: true, force: true });
  git(['worktree', 'add', '--detach', dir, commit]);
  const remove = () => {
    try {
      git(['worktree', 'remove', '--force', dir]);
    } catch {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    const lock = (root: string) => readFileSync(path.join(root, 'package-lock.json'), 'utf8');
    const npm = (args: string[]) =>
      execFileSync('npm', args, { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
    if (lock(dir) === lock(ROOT)) {
      symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    } else {
      log(`${ref}: its package-lock.json differs, running npm ci there`);
      npm(['ci', '--no-audit', '--no-fund', '--ignore-scripts']);
    }
    log(`building ${ref} (${commit.slice(0, 10)}) in ${dir}`);
    npm(['run', '--silent', 'build']);
    const main = path.join(dir, 'dist', 'src', 'main.js');
    if (!existsSync(main)) throw new Error(`${ref} built no dist/src/main.js`);
    return { main, remove };
  } catch (err) {
    remove();
    throw err;
  }
}

const pct = (before: number, after: number) => {
  const change = (after / before - 1) * 100;
  return `${change >= 0 ? '+' : ''}${change.toFixed(1)} %`;
};

function table(results: AbResult[], ref: string): string {
  const rows = [['scenario', `CPU µs/req ${ref}`, 'CPU µs/req this', 'change', `req/s ${ref}`, 'req/s this']];
  const scenarios = [...new Set(results.map((r) => r.scenario))];
  for (const scenario of scenarios) {
    const [base, mine] = ['ref', 'this'].map((v) =>
      results.find((r) => r.scenario === scenario && r.variant === v),
    ) as [AbResult, AbResult];
    const cpu = (r: AbResult) => `${median(r.cpuUs).toFixed(0)} (min ${Math.min(...r.cpuUs).toFixed(0)})`;
    rows.push([
      scenario,
      cpu(base),
      cpu(mine),
      pct(median(base.cpuUs), median(mine.cpuUs)),
      median(base.reqPerSec).toFixed(0),
      median(mine.reqPerSec).toFixed(0),
    ]);
  }
  const widths = (rows[0] as string[]).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r.map((c, i) => (i ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join('  ');
  return [
    line(rows[0] as string[]),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.slice(1).map(line),
  ].join('\n');
}

/** Builds REF, alternates it with this build over the scenarios, prints both CPU figures per scenario. */
export async function compare(
  ref: string,
  opts: { rounds: number; duration: number; connections: number; only: string[] },
  log: (line: string) => void,
): Promise<void> {
  const built = buildRef(ref, log);
  try {
    const variants = [
      { name: 'ref', main: built.main, settings: {}, nodeArgs: [] },
      { name: 'this', main: THIS_MAIN, settings: {}, nodeArgs: [] },
    ];
    log(
      `alternating ${ref} and this build: ${opts.rounds} rounds of ${opts.duration} s runs (${opts.only.join(',')})`,
    );
    const results = await alternate(variants, { ...opts, log });
    process.stdout.write(`${table(results, ref)}\n\n`);
    process.stdout.write(
      `CPU µs/req: the service process's CPU time per request, median of ${opts.rounds} alternated runs (min); ` +
        'differences under about 5 % are noise (docs/performance.md).\n',
    );
  } finally {
    built.remove();
  }
}
