// Queues with real worker processes: a worker killed mid-message, four workers crashing at random, and what an idle
// long poll costs Redis (INFO commandstats, on a redis-server of this file's own).
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Redis from 'ioredis';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { type RedisServer, startRedisServer } from './support/redis-server';
import { until } from './support/until';

const WORKER = path.join(__dirname, 'fixtures', 'queue-worker.mjs');
/** Messages of the crash run: small enough for a loaded 2-core machine; QUEUE_STRESS_MESSAGES=10000 for the full run. */
const MESSAGES = Number(process.env.QUEUE_STRESS_MESSAGES ?? 300);
/** How long the crash run may take: 100 ms per message on a loaded machine, at least 4 minutes. */
const RUN_MS = Math.max(240_000, MESSAGES * 100);
/** How long a worker process or a long poll may take to get there on a loaded machine. */
const SLOW_MS = 60_000;

let redis: RedisServer;
let t: TestApp;
let server: http.Server;
let url: string;
const workers = new Set<ChildProcess>();

beforeAll(async () => {
  redis = await startRedisServer();
  t = await testApp('queue-processes', { SVC_REDIS_URL: redis.url, SVC_LIST_MAX_WAITERS_PER_CLIENT: '16' });
  server = http.createServer(t.data);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const w of workers) w.kill('SIGKILL');
  await new Promise((resolve) => server.close(resolve));
  await t.close();
  await redis.stop();
});

const api = () => request(t.data);
const json = { 'Content-Type': 'application/json' };
const put = (q: string, body: object) => api().put(`/store/queues/${q}`).set(json).send(body);
const post = (q: string, what: string, body: object = {}) =>
  api().post(`/store/queues/${q}/${what}`).set(json).send(body);
const stats = async (q: string) => (await api().get(`/store/queues/${q}`)).body.stats;

/** A worker process; `lines` collects what it prints. */
function worker(queue: string, crashRate: number, mode = '') {
  const child = spawn(process.execPath, [WORKER, url, queue, String(crashRate), mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  workers.add(child);
  const lines: string[] = [];
  let rest = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const text = rest + chunk.toString();
    const parts = text.split('\n');
    rest = parts.pop() ?? '';
    lines.push(...parts);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => workers.delete(child));
  return { child, lines, exited };
}

test('when a worker is killed (SIGKILL) while it holds a message, then the message is delivered again after its lease', async () => {
  await put('q-kill', { visibility_timeout: 1 });
  await post('q-kill', 'messages', { body: 'precious' });
  const w = worker('q-kill', 0, 'hang');
  await until(() => w.lines.includes('GOT precious'), SLOW_MS);
  w.child.kill('SIGKILL');
  await w.exited;
  const res = await post('q-kill', 'receive', { wait: 10 });
  expect(res.body.messages[0]).toMatchObject({ body: 'precious', delivery_count: 2 });
  await post('q-kill', 'ack', { receipts: [res.body.messages[0].receipt] });
});

test(
  `when 4 workers take ${MESSAGES} messages (half in groups) and crash at random, then each is acked exactly once or dead-lettered, none lost, groups in order`,
  async () => {
    const queue = 'q-crash';
    await put(queue, { visibility_timeout: 1, max_deliveries: 4, backoff: { type: 'fixed', delay: 0 } });
    for (let i = 0; i < MESSAGES; i += 500) {
      // Every other message is in one of 8 groups: `m<n>:g<k>`.
      const messages = Array.from({ length: Math.min(500, MESSAGES - i) }, (_, j) => {
        const n = i + j;
        return n % 2 ? { body: `m${n}:g${n % 16}`, group: `g${n % 16}` } : { body: `m${n}` };
      });
      expect((await post(queue, 'messages', { messages })).status).toBe(201);
    }
    const all: ReturnType<typeof worker>[] = [];
    const start = () => {
      const w = worker(queue, 0.02);
      all.push(w);
      // A crashed worker is replaced, as a supervisor would.
      void w.exited.then(() => {
        if (!done) start();
      });
    };
    let done = false;
    for (let i = 0; i < 4; i++) start();
    const acked = () =>
      all.flatMap((w) => w.lines).filter((l) => l.startsWith('ACK ') && l.includes(' acked '));
    const finished = await until(async () => {
      const s = await stats(queue);
      const idle = s.ready === 0 && s.in_flight === 0 && s.delayed === 0;
      return idle && acked().length + s.dead === MESSAGES && s;
    }, RUN_MS).finally(() => {
      // Also when it failed: no worker is started again, and none outlives the test.
      done = true;
      for (const w of all) w.child.kill('SIGKILL');
    });
    const ackedBodies = acked().map((l) => l.split(' ')[1]);
    const dead = (await api().get(`/store/queues/${queue}/messages?state=dead&limit=1000`)).body.messages.map(
      (m: { body: string }) => m.body,
    );
    expect(new Set(ackedBodies).size).toBe(ackedBodies.length);
    expect(ackedBodies.filter((b) => dead.includes(b))).toEqual([]);
    const bodies = Array.from({ length: MESSAGES }, (_, n) => (n % 2 ? `m${n}:g${n % 16}` : `m${n}`));
    expect(new Set([...ackedBodies, ...dead])).toEqual(new Set(bodies));
    // A group's messages were first delivered in send order (one in flight at a time: never two at once).
    const firstDelivered = new Map(acked().map((l) => [l.split(' ')[1], Number(l.split(' ')[3])]));
    for (let g = 1; g < 16; g += 2) {
      const times = bodies
        .filter((b) => b.endsWith(`:g${g}`) && firstDelivered.has(b))
        .map((b) => firstDelivered.get(b));
      expect(times).toEqual([...times].sort((a, b) => (a as number) - (b as number)));
    }
    expect(finished.dead).toBe(dead.length);
    const crashes = all.filter((w) => w.child.signalCode === 'SIGKILL').length;
    expect(crashes).toBeGreaterThan(0);
  },
  RUN_MS + 60_000,
);

test('when a receive long-polls an idle queue, then Redis runs no command while it waits, until a send wakes it', async () => {
  await put('q-idle', {});
  const probe = new Redis(redis.url);
  try {
    const pool = t.context.store.waiters as { waiting: number };
    // The blocking reads of earlier tests' workers end with their waits.
    await until(() => pool.waiting === 0, SLOW_MS);
    const waiting = post('q-idle', 'receive', { wait: 20 }).then((r) => r);
    await until(() => pool.waiting === 1, SLOW_MS);
    // The blocking XREAD is issued: from here until a send, nothing else may reach Redis.
    await until(async () => /cmd=xread/.test(String(await probe.call('CLIENT', 'LIST'))), SLOW_MS);
    await probe.call('CONFIG', 'RESETSTAT');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const during = String(await probe.info('commandstats'));
    const calls = [...during.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map(([, c, n]) => `${c}=${n}`);
    expect(calls.filter((c) => !/^(config|info|client)/.test(c))).toEqual([]);
    await post('q-idle', 'messages', { body: 'wake' });
    const answered = await waiting;
    expect([answered.status, answered.body.messages?.[0]?.body]).toEqual([200, 'wake']);
  } finally {
    probe.disconnect();
  }
});
