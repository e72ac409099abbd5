// The TypeScript client as shipped: `npm run build` output (ES modules + declarations) imported by plain Node, no
// TypeScript or bundler in between, talking to a real service.
import { exec, execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { type Served, served } from './support/served';

const CLIENT = path.join(__dirname, '..', 'clients', 'typescript');
let s: Served;
beforeAll(async () => {
  s = await served('client-build');
});
afterAll(() => s.close());

test('when built, then Node imports dist/index.js as an ES module and it works; its declarations are complete', async () => {
  // Asynchronously: the service answers from this process, whose event loop (and Redis connections) must keep running.
  await promisify(exec)('npm run --silent build', { cwd: CLIENT });
  for (const file of ['index.js', 'index.d.ts', 'schema.d.ts'])
    expect(existsSync(path.join(CLIENT, 'dist', file))).toBe(true);
  const script = `
    import { createGateway } from ${JSON.stringify(path.join(CLIENT, 'dist', 'index.js'))};
    const gw = createGateway({ baseUrl: ${JSON.stringify(s.base)} });
    await gw.strings.set('built', '41');
    const n = await gw.strings.incr('built');
    const missing = await gw.strings.get('built-none');
    console.log(JSON.stringify({ n: n.toString(), bigint: typeof n, missing }));
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    timeout: 30_000,
  });
  expect(JSON.parse(stdout)).toEqual({ n: '42', bigint: 'bigint', missing: null });
}, 120_000);
