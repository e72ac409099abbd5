// Locks under real processes: contenders SIGSTOPped longer than the TTL never get a fencing token twice nor one
// smaller than a live holder's; a waiting acquire costs Redis nothing while it waits (INFO commandstats).
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Redis from 'ioredis';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { type RedisServer, startRedisServer } from './support/redis-server';
import { started, until } from './support/until';

/** LOCK_STRESS=1: the full run (8 × 1,000 acquisitions); by default a smaller one that stays well under a minute. */
const ROUNDS = process.env.LOCK_STRESS === '1' ? 1000 : 100;
const CONTENDERS = 8;
const TTL_MS = 200;
jest.setTimeout(process.env.LOCK_STRESS === '1' ? 1_800_000 : 120_000);

let redis: RedisServer;
let t: TestApp;
let gateway: http.Server;
let base: string;
beforeAll(async () => {
  redis = await startRedisServer();
  t = await testApp('locks-processes', { SVC_REDIS_URL: redis.url });
  gateway = t.data.listen(0, '127.0.0.1');
  await new Promise((resolve) => gateway.once('listening', resolve));
  base = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => gateway.close(resolve));
  await t.close();
  await redis.stop();
});

/** A resource that checks fencing tokens: it accepts a write only with a token larger than any it accepted. */
async function fencedResource() {
  let last = 0;
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => {
      text += c.toString();
    });
    req.on('end', () => {
      const { fence } = JSON.parse(text) as { fence: number };
      const accepted = fence > last;
      if (accepted) last = fence;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ accepted }));
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

interface Round {
  fence: number;
  accepted: boolean;
  released: number;
}

function contender(resource: string, name: string) {
  const script = path.join(__dirname, 'support', 'lock-contender.js');
  const child = spawn(process.execPath, [script, base, resource, name, String(ROUNDS), String(TTL_MS)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  return {
    child,
    exited,
    rounds: () =>
      out
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** SIGSTOPs one of `children` at random for longer than the TTL, again and again, until `running()` is false. */
async function pauser(children: ChildProcess[], running: () => boolean): Promise<number> {
  let pauses = 0;
  while (running()) {
    const victim = children[Math.floor(Math.random() * children.length)] as ChildProcess;
    if (victim.exitCode === null && victim.kill('SIGSTOP')) {
      pauses++;
      await pause(TTL_MS + 100 + Math.random() * 300);
      victim.kill('SIGCONT');
    }
    await pause(50 + Math.random() * 150);
  }
  return pauses;
}

test('when 8 contender processes take one lock again and again while some are SIGSTOPped past the TTL, then no fencing token is handed out twice and no live holder is fenced off', async () => {
  const resource = await fencedResource();
  const contenders = Array.from({ length: CONTENDERS }, () => contender(resource.url, 'stress'));
  let done = false;
  const pauses = pauser(
    contenders.map((c) => c.child),
    () => !done,
  );
  try {
    const codes = await Promise.all(contenders.map((c) => c.exited));
    expect(codes).toEqual(contenders.map(() => 0));
  } finally {
    done = true;
    for (const c of contenders) if (c.child.exitCode === null) c.child.kill('SIGKILL');
    await pauses;
    resource.server.close();
  }
  expect(await pauses).toBeGreaterThan(0);
  const rounds = contenders.flatMap((c) => c.rounds()) as Round[];
  expect(rounds.filter((r) => r.fence === undefined)).toEqual([]);
  expect(rounds).toHaveLength(CONTENDERS * ROUNDS);
  // Never two holders with the same token.
  expect(new Set(rounds.map((r) => r.fence)).size).toBe(rounds.length);
  // A holder that still held the lock when it released it was never refused by the fenced resource: no grant
  // after it had a smaller token. Only holders that lost the lock (paused past the TTL) may be refused.
  expect(rounds.filter((r) => r.released === 200 && !r.accepted)).toEqual([]);
  expect(rounds.every((r) => r.released === 200 || r.released === 409)).toBe(true);
  if (process.env.LOCK_STRESS_REPORT === '1')
    console.log({
      pauses: await pauses,
      rounds: rounds.length,
      lost: rounds.filter((r) => r.released === 409).length,
      refused: rounds.filter((r) => !r.accepted).length,
    });
});

/** Calls of each command so far, from INFO commandstats. */
async function commandCalls(client: Redis): Promise<Record<string, number>> {
  const info = await client.info('commandstats');
  return Object.fromEntries(
    [...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map(([, name, calls]) => [name, Number(calls)]),
  );
}

test('when an acquire waits on a held lock, then it sends Redis nothing while it waits, and gets the lock after the release', async () => {
  const client = new Redis(redis.url);
  try {
    const acquire = (body: object) =>
      request(t.data).post('/store/locks/quiet/acquire').set('Content-Type', 'application/json').send(body);
    const held = await acquire({ ttl_ms: 60_000 });
    const waiting = started(acquire({ ttl_ms: 10_000, wait_ms: 30_000 }));
    await until(() => t.context.locks.waiters === 1);
    // Requests of the contenders above may still land on a loaded machine: start from a Redis that went quiet.
    let before = await commandCalls(client);
    for (const end = Date.now() + 20_000; Date.now() < end; ) {
      await pause(300);
      const now = await commandCalls(client);
      if (now.evalsha === before.evalsha && now.eval === before.eval) break;
      before = now;
    }
    before = await commandCalls(client);
    // A second of waiting: a poller would have called Redis many times by now.
    await pause(1000);
    const after = await commandCalls(client);
    for (const command of ['evalsha', 'eval', 'get', 'pttl', 'exists', 'subscribe'])
      expect([command, after[command] ?? 0]).toEqual([command, before[command] ?? 0]);
    await request(t.data)
      .post('/store/locks/quiet/release')
      .set('Content-Type', 'application/json')
      .send({ token: held.body.token });
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body.fence).toBeGreaterThan(held.body.fence);
    // The release's one script call, then the waiter's one attempt.
    expect((await commandCalls(client)).evalsha).toBe((after.evalsha ?? 0) + 2);
  } finally {
    client.disconnect();
  }
});
