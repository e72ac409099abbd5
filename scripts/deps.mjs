// Installs the locked dependencies (npm ci) when node_modules is missing or older than package-lock.json.
// Run by `npm test` (pretest) and used by `npm start`; after `npm ci` (as .ci/run does) it installs nothing.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const mtime = (file) => fs.statSync(path.join(root, file), { throwIfNoEntry: false })?.mtimeMs ?? 0;

/** Why an install is needed, or null. npm writes node_modules/.package-lock.json on every install. */
export function installReason() {
  const installed = mtime('node_modules/.package-lock.json');
  if (installed === 0) return 'node_modules is missing';
  if (installed < mtime('package-lock.json')) return 'package-lock.json is newer than node_modules';
  return null;
}

/** npm ci's arguments: errors only, so that a successful install prints nothing but our own line. */
export const NPM_CI = ['ci', '--no-audit', '--no-fund', '--loglevel=error'];

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const reason = installReason();
  if (reason) {
    console.log(`[deps] ${reason}: npm ci`);
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const { status, error } = spawnSync(npm, NPM_CI, {
      cwd: root,
      stdio: 'inherit',
      shell: process.platform === 'win32',
    });
    if (error) console.error(`[deps] cannot run npm: ${error.message}`);
    process.exit(status ?? 1);
  }
}
