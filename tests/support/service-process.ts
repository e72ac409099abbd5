// Runs the service as a process (src/main.ts through SWC), as `npm start` would, for tests of start and stop.
//
//   const svc = startService({ SVC_PORT: '18080' });    // only PATH and SVC_HOST=127.0.0.1 come from here
//   await svc.exited                                    // { code, at }: once the process exited and its pipes drained
//   svc.output(), svc.stdout(), svc.stderr()
//   afterAll(killServices);                             // SIGKILLs any this file started that still runs
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const children: ChildProcess[] = [];

export function startService(env: Record<string, string>) {
  const child = spawn(process.execPath, ['-r', './tests/support/ts-register.js', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, SVC_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => {
    output += c.toString();
    stdout += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    output += c.toString();
    stderr += c.toString();
  });
  // 'close': both pipes are drained too, so the output is complete.
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.once('close', (code) => resolve({ code, at: Date.now() })),
  );
  return { child, exited, output: () => output, stdout: () => stdout, stderr: () => stderr };
}

export function killServices(): void {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
}
