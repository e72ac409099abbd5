// Graceful shutdown of the process (src/main.ts) under keep-alive load: SIGTERM resets nothing that was sent on an
// open connection, answers with Connection: close, and exits as soon as the requests in flight are answered.
import http from 'node:http';
import { freePort } from './support/redis-server';
import { killServices, startService } from './support/service-process';

const SHUTDOWN_TIMEOUT_MS = 20_000;
const CLIENTS = 4;
const LOOPS_PER_CLIENT = 2;
afterAll(killServices);

const start = (env: Record<string, string>) =>
  startService({
    SVC_REDIS_URL: process.env.REDIS_URL as string,
    SVC_KEY_PREFIX: `t:shutdown:${process.pid}:`,
    SVC_RATE_LIMIT_ENABLED: 'false',
    SVC_SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
    ...env,
  });

interface Outcome {
  status?: number;
  connection?: string;
  error?: string;
  /** Sent on a keep-alive connection that had already carried a request. */
  reused?: boolean;
}

/** One request on `agent`: its status and Connection header, or the socket error's code. */
function send(agent: http.Agent, port: number, n: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const write = n % 2 === 0;
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        agent,
        method: write ? 'POST' : 'GET',
        path: write ? `/store/string/k${n % 10}` : `/store/string/missing${n % 10}`,
        headers: write ? { 'Content-Type': 'application/json' } : {},
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
        res.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      resolve({ error: err.code ?? err.message, reused: req.reusedSocket }),
    );
    req.end(write ? JSON.stringify({ value: `v${n}` }) : undefined);
  });
}

test.each([1, 2])(
  'when SIGTERM arrives under keep-alive load (SVC_WORKERS=%i), then no request is reset and the process exits long before the timeout',
  async (workers) => {
    const port = await freePort();
    const svc = start({ SVC_PORT: String(port), SVC_WORKERS: String(workers) });
    const deadline = Date.now() + 60_000;
    const listening = () => (svc.output().match(/listening/g) ?? []).length >= workers;
    while (!listening() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(listening()).toBe(true);

    let sigtermAt = 0;
    const outcomes: Array<Outcome & { afterSigterm: boolean }> = [];
    const agents = Array.from({ length: CLIENTS }, () => new http.Agent({ keepAlive: true, maxSockets: 2 }));
    // Each loop sends requests back to back until the port refuses connections (the listener is closed).
    const loop = async (agent: http.Agent, id: number) => {
      for (let n = id; Date.now() < deadline; n += 100) {
        const outcome = await send(agent, port, n);
        outcomes.push({ ...outcome, afterSigterm: sigtermAt > 0 });
        if (outcome.error) return;
      }
    };
    const loops = agents.flatMap((agent, i) =>
      Array.from({ length: LOOPS_PER_CLIENT }, (_, j) => loop(agent, i * LOOPS_PER_CLIENT + j)),
    );
    while (outcomes.length < 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    sigtermAt = Date.now();
    svc.child.kill('SIGTERM');
    const exit = await svc.exited;
    await Promise.all(loops);
    for (const agent of agents) agent.destroy();

    expect(exit.code).toBe(0);
    // A bound, not a measurement: a drain that waited for idle keep-alive clients would take the whole timeout.
    expect(exit.at - sigtermAt).toBeLessThan(SHUTDOWN_TIMEOUT_MS / 2);
    // A request on a connection the service was serving must be answered: any error there is a lost request.
    // A new connection may be refused once the listener is closed, or (SVC_WORKERS > 1) reset unread by the
    // primary, which accepted it when no worker was left to take it: no request on it was received.
    const lost = outcomes.filter((o) => o.error && o.reused);
    expect(lost).toEqual([]);
    const fresh = outcomes.filter((o) => o.error && !o.reused);
    expect(
      fresh.filter((o) => o.error !== 'ECONNREFUSED' && (workers === 1 || o.error !== 'ECONNRESET')),
    ).toEqual([]);
    expect(outcomes.filter((o) => o.status !== undefined && ![200, 201, 404].includes(o.status))).toEqual([]);
    // Requests that kept coming on open connections were answered, each telling the client to close.
    const answeredAfter = outcomes.filter((o) => o.afterSigterm && o.status !== undefined);
    expect(answeredAfter.some((o) => o.connection === 'close')).toBe(true);
    expect(svc.output()).toMatch(/stopped/);
  },
  90_000,
);
