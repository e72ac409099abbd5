// The layer rules (.dependency-cruiser.cjs) as `npm run lint` runs them: src/ keeps them, an import circle fails.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');

function cruise(target: string): { status: number | null; output: string } {
  const bin = path.join(ROOT, 'node_modules', '.bin', 'depcruise');
  const run = spawnSync(bin, [target, '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

test('when src/ is cruised, then no module breaks a layer rule or sits in an import circle', () => {
  const { status, output } = cruise('src');
  expect([status, output]).toEqual([0, expect.stringContaining('no dependency violations found')]);
});

test('when two modules import each other, then the lint fails naming the circle', () => {
  const { status, output } = cruise('tests/fixtures/circle');
  expect(status).not.toBe(0);
  expect(output).toContain('no-circular');
});
