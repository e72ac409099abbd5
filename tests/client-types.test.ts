// The TypeScript client's generated types (clients/typescript/src/schema.d.ts) are those of the committed
// openapi.yaml; `npm run client:types` regenerates them. Its dependencies are the ones the root installs.
import { execSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const CLIENT = path.join(__dirname, '..', 'clients', 'typescript');
const SCHEMA = path.join(CLIENT, 'src', 'schema.d.ts');
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

test('when openapi.yaml changes, then the generated client types are regenerated and committed', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'client-types-'));
  try {
    const out = path.join(dir, 'schema.d.ts');
    const command: string = readJson(path.join(CLIENT, 'package.json')).scripts.types;
    execSync(command.replace('src/schema.d.ts', out), {
      cwd: CLIENT,
      env: {
        ...process.env,
        PATH: `${path.join(__dirname, '..', 'node_modules', '.bin')}:${process.env.PATH}`,
      },
      stdio: 'pipe',
    });
    const fresh = readFileSync(out, 'utf8');
    // toBe would print both 9,000-line files: say what to run instead.
    if (fresh !== readFileSync(SCHEMA, 'utf8'))
      throw new Error(
        'clients/typescript/src/schema.d.ts is stale: run `npm run client:types` and commit it',
      );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the client's dependencies are installed by the root package.json, in the same ranges", () => {
  const root = readJson(path.join(__dirname, '..', 'package.json'));
  const client = readJson(path.join(CLIENT, 'package.json'));
  for (const [name, range] of Object.entries(client.dependencies))
    expect([name, root.devDependencies[name]]).toEqual([name, range]);
});
