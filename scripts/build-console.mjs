// Builds the web console (console/) into dist/console: one bundle from console/src/main.ts (esbuild), index.html
// and app.css copied. `npm run build` runs it; the test harness too, before the tests (tests/support/global-setup.ts).
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CONSOLE_OUT = path.join(root, 'dist', 'console');

/** Writes the console to `outdir`; resolves once it is complete. */
export async function buildConsole(outdir = CONSOLE_OUT) {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  await build({
    entryPoints: [path.join(root, 'console', 'src', 'main.ts')],
    bundle: true,
    format: 'esm',
    target: ['es2022'],
    minify: true,
    sourcemap: true,
    outfile: path.join(outdir, 'app.js'),
    logLevel: 'warning',
    legalComments: 'linked',
  });
  for (const file of ['index.html', 'app.css'])
    copyFileSync(path.join(root, 'console', file), path.join(outdir, file));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildConsole();
