// SVC_WORKERS: a primary process forks workers that share the port, replaces a crashed one, and stops them all;
// admin statistics, metrics and clients cover every worker, and a reload applies in every worker.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { SERVICE_ENV, SERVICE_NODE_FLAGS } from '../src/node-flags';
import { count, parseScrape, typeOf, value } from './support/prometheus';
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
  // Workers run with the service's V8 options and malloc settings (node-flags.ts), which this primary was started
  // without.
  const argv = readFileSync(`/proc/${first}/cmdline`, 'utf8').split('\0');
  expect(argv).toEqual(expect.arrayContaining([...SERVICE_NODE_FLAGS]));
  const environ = readFileSync(`/proc/${first}/environ`, 'utf8').split('\0');
  expect(environ).toEqual(expect.arrayContaining(Object.entries(SERVICE_ENV).map(([k, v]) => `${k}=${v}`)));
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

/**
 * One request on a connection of its own (`Connection: close`): the primary hands each new connection to
 * the next worker in turn, so consecutive requests reach both workers.
 */
function call(port: number, method: string, path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers = { 'Content-Type': 'application/json' };
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode as number, text }));
    });
    req.on('error', reject).end();
  });
}
const json = async (port: number, method: string, path: string) =>
  JSON.parse((await call(port, method, path)).text);

test('when SVC_WORKERS=2, then stats, metrics and clients add up both workers, and a reload (endpoint or SIGHUP) applies in both', async () => {
  const [port, adminPort] = [await freePort(), await freePort()];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-workers-'));
  const file = path.join(dir, 'config.yaml');
  writeFileSync(file, 'SVC_RATE_LIMIT_REQUESTS: 100\n');
  lines = [];
  primary = start({
    SVC_WORKERS: '2',
    SVC_PORT: String(port),
    SVC_ADMIN_PORT: String(adminPort),
    SVC_ADMIN_HOST: '127.0.0.1',
    SVC_CONFIG_FILE: file,
    SVC_RATE_LIMIT_ENABLED: 'false',
    SVC_REDIS_URL: process.env.REDIS_URL as string,
  });
  const exited = new Promise<number | null>((resolve) => primary?.once('exit', (code) => resolve(code)));
  try {
    await waitFor(() => logged('admin listening').length === 2, 'two workers listening');
    const N = 10;
    for (let i = 0; i < N; i++)
      expect((await call(port, 'GET', '/store/string/workers-missing')).status).toBe(404);

    // An admin request counts once it is answered: the stats request is not in its own figures.
    const stats = await json(adminPort, 'GET', '/store/admin/stats');
    expect(stats.requests).toMatchObject({
      total: N,
      by_method: { GET: N },
      by_endpoint: { '/store/string': N },
    });
    expect(stats.errors).toMatchObject({ total: N, by_type: { not_found: N } });
    expect(stats.database.operations).toBe(N);
    expect(stats.database.connection_pool).toEqual({ active: 2, idle: 0, max: 2 }); // one per worker

    const metrics = parseScrape((await call(adminPort, 'GET', '/store/admin/metrics')).text);
    const requests = metrics.families.find((f) => f.name === 'svc_requests_total');
    const sum = requests?.metrics.reduce((total, m) => total + Number('value' in m ? m.value : 0), 0);
    expect(sum).toBe(N + 1); // and the stats request
    const labels = { method: 'GET', endpoint: '/store/string/{key}' };
    expect(value(metrics, 'svc_requests_total', labels)).toBe(N);
    expect(count(metrics, 'svc_response_time_seconds', labels)).toBe(N);
    expect(value(metrics, 'svc_errors_total', { type: 'not_found' })).toBe(N);
    expect(typeOf(metrics, 'svc_response_time_seconds')).toBe('HISTOGRAM');
    expect(value(metrics, 'process_resident_memory_bytes')).toBeGreaterThan(0);

    // One client (same address, no user agent) seen by both workers: one entry, requests summed.
    const clients = await json(adminPort, 'GET', '/store/admin/clients');
    expect(clients.total_clients).toBe(1);
    expect(clients.clients[0].requests_count).toBe(N + 2);

    writeFileSync(file, 'SVC_RATE_LIMIT_REQUESTS: 777\n');
    const reload = await json(adminPort, 'POST', '/store/admin/reload');
    expect(reload.message).toBe('Configuration reloaded; applied SVC_RATE_LIMIT_REQUESTS');
    // Each worker logs its own reload (the other one before this answer came; its line may trail in the pipe).
    await waitFor(() => logged(reload.message).length === 2, 'both workers reloaded');
    for (let i = 0; i < 4; i++) {
      const info = await json(adminPort, 'GET', '/store/admin/info');
      expect(info.config.rate_limit_requests).toBe(777);
    }

    writeFileSync(file, 'SVC_RATE_LIMIT_REQUESTS: 888\n');
    primary.kill('SIGHUP');
    await waitFor(() => logged(reload.message).length === 4, 'both workers reloaded on SIGHUP');
    for (let i = 0; i < 4; i++) {
      const info = await json(adminPort, 'GET', '/store/admin/info');
      expect(info.config.rate_limit_requests).toBe(888);
    }
  } finally {
    primary.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
  expect(await exited).toBe(0);
}, 120_000);
