// SVC_WORKERS: a primary process forks workers that share the port, replaces a crashed one, and stops them all.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { freePort } from './support/redis-server';

const ROOT = path.join(__dirname, '..');
let primary: ChildProcess | undefined;
let lines: Array<Record<string, unknown>> = [];

afterAll(() => {
  if (primary?.exitCode === null) primary.kill('SIGKILL');
  for (const pid of workerPids()) alive(pid) && process.kill(pid, 'SIGKILL');
});

const logged = (message: string) => lines.filter((l) => l.message === message);
const workerPids = () => logged('worker started').map((l) => l.pid as number);
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; log:\n${JSON.stringify(lines)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function start(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['-r', './tests/support/ts-register.js', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, SVC_LOG_FORMAT: 'json', SVC_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    for (const part of parts) if (part.trim()) lines.push(JSON.parse(part));
  });
  return child;
}

test('when SVC_WORKERS=2, then two workers serve one port, a crashed one is replaced, and SIGTERM stops all with exit 0', async () => {
  const port = await freePort();
  lines = [];
  primary = start({
    SVC_WORKERS: '2',
    SVC_PORT: String(port),
    SVC_REDIS_URL: process.env.REDIS_URL as string,
  });
  const exited = new Promise<number | null>((resolve) => primary?.once('exit', (code) => resolve(code)));
  await waitFor(() => logged('listening').length === 2, 'two workers listening');
  const [first, second] = workerPids();
  expect(first).not.toBe(second);
  const res = await fetch(`http://127.0.0.1:${port}/store/string/workers-test-missing`);
  expect(res.status).toBe(404);
  expect(((await res.json()) as { error: string }).error).toBe('not_found');

  process.kill(first as number, 'SIGKILL');
  await waitFor(() => logged('listening').length === 3, 'a replacement worker listening');
  expect(logged('worker exited unexpectedly; restarting it')).toHaveLength(1);
  expect(workerPids()).toHaveLength(3);
  expect((await fetch(`http://127.0.0.1:${port}/store/string/workers-test-missing`)).status).toBe(404);

  primary.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(workerPids().filter(alive)).toEqual([]);
  expect(logged('stopped')).toHaveLength(3); // both live workers and the primary
}, 120_000);
