// `node dist/bench/script-cost.js`: Redis's own time per request of what the hot paths send, beside a plain client
// doing the same Redis work with the same batching: INFO commandstats (every command's usec, summed) and used_cpu
// (Redis's whole CPU: reading, parsing, replying), on a redis-server of its own that is given a higher priority than
// the rest of the machine (as root), so that another load moves the figures less. This is the Redis side of a
// request: what bounds a fleet of gateway instances in front of one Redis, whose commands run on one core.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';
import { loadConfig } from '../src/config';
import { boundedString } from '../src/engine/plain-reads';
import { runBatch, runOp } from '../src/engine/run';
import { hashes } from '../src/families/hash';
import { sets } from '../src/families/set';
import { strings } from '../src/families/string';
import { zsets } from '../src/families/zset';
import type { RequestInput } from '../src/http/contract';
import type { Op } from '../src/ops/op';
import { CapabilityWatch } from '../src/redis/capability-watch';
import { createRedis, replyBudget } from '../src/redis/client';
import { createKeyspace } from '../src/redis/keys';
import type { Store } from '../src/redis/store';
import { startRedisServer } from '../tests/support/redis-server';
import { median } from './load';
import { VALUE } from './scenarios';
import { defineSetEach, setEach } from './set-each';

const ROUNDS = 5;
const bound = strings.bind({ maxValueBytes: 1 << 20 });
const hashRoutes = hashes.bind({ maxValueBytes: 1 << 20 }).routes;
const setRoutes = sets.bind({ maxValueBytes: 1 << 20 }).routes;
const zsetRoutes = zsets.bind({ maxValueBytes: 1 << 20 }).routes;
/** A whole hash or set of 10 short fields or members (GET /store/hash/{key}, /store/set/{key}). */
const FIELDS = Array.from({ length: 10 }, (_, i) => [`field${i}`, `value${i}`]).flat();
const route = (method: string, key: string, body: Record<string, unknown> = {}, family = 'string') => {
  const all = { string: bound.routes, hash: hashRoutes, set: setRoutes, zset: zsetRoutes }[family] ?? [];
  const r = all.find((x) => x.method === method && x.path === `/store/${family}/{key}`);
  const input: RequestInput = { params: { key }, headers: {}, query: {}, body };
  return (r as NonNullable<typeof r>).build(input);
};
const batchOf = (n: number): Op[] =>
  Array.from({ length: n }, (_, i) =>
    (bound.batch.get('set') as (item: never) => Op)({
      type: 'set',
      key: `cost:batch:${i}`,
      value: VALUE,
    } as never),
  );

const BIG = 'v'.repeat(64 * 1024);

interface Case {
  readonly name: string;
  readonly calls: number;
  /** The plain client's row this one is read against, and the most it may cost Redis (x that row). */
  readonly against?: string;
  readonly target?: number;
  run(store: Store, plain: Redis): Promise<unknown>;
}

/** GET of a whole hash, set or zset: the service's row and its script's before (`script`: what that read ran). */
const wholeRead = (
  family: string,
  key: string,
  size: string,
  against: string,
  ...script: (string | number)[]
): Case[] => [
  {
    name: `GET /store/${family}/{key} (${size})`,
    calls: 10_000,
    against,
    run: (s) => runOp(s, route('get', key, {}, family)),
  },
  {
    name: `GET /store/${family}/{key} by script (before)`,
    calls: 10_000,
    against,
    run: (s) => s.redis.typedEtag(key, 'r2', family, ...script),
  },
];

/** What each case sends (the service's as it builds it; the plain client's by hand); `calls` requests per round. */
const CASES: Case[] = [
  { name: 'plain: SET', calls: 20_000, run: (_, p) => p.set('cost:p', VALUE) },
  {
    name: 'POST /store/string/{key}',
    calls: 20_000,
    against: 'plain: SET',
    target: 2,
    run: (s) => runOp(s, route('post', 'cost:s', { value: VALUE })),
  },
  {
    name: 'POST /store/string/{key} by script (before)',
    calls: 20_000,
    against: 'plain: SET',
    run: (s) => s.redis.typedEtag('cost:s', 'w3', 'string', '', '0', '', '', '0', 'SET', VALUE),
  },
  {
    name: 'plain: GET + PTTL',
    calls: 20_000,
    run: (_, p) => Promise.all([p.get('cost:p'), p.pttl('cost:p')]),
  },
  // After the POST, which wrote its key.
  {
    name: 'GET /store/string/{key}',
    calls: 20_000,
    against: 'plain: GET + PTTL',
    target: 1.5,
    run: (s) => runOp(s, route('get', 'cost:s')),
  },
  {
    name: 'GET /store/string/{key} by script (before)',
    calls: 20_000,
    against: 'plain: GET + PTTL',
    run: (s) => s.redis.typedEtag('cost:s', 'r2', 'string', 'GET'),
  },
  { name: 'plain: GET', calls: 20_000, run: (_, p) => p.get('cost:p') },
  {
    name: 'GET /upstash/get/{key} by script (before)',
    calls: 20_000,
    against: 'plain: GET',
    run: (s) => s.redis.upstashBounded(1, 'cost:s', 'strings', 'run', 'get', 'cost:s'),
  },
  {
    name: 'GET /upstash/get/{key} (its Redis commands)',
    calls: 20_000,
    against: 'plain: GET',
    target: 1.3,
    run: (s) => boundedString(s, 'cost:s', replyBudget(s.redis).bytes, false, false),
  },
  { name: 'plain: GET of 64 KiB', calls: 5_000, run: (_, p) => p.get('cost:big-p') },
  {
    name: 'GET /store/string/{key} of 64 KiB',
    calls: 5_000,
    against: 'plain: GET of 64 KiB',
    target: 1.5,
    run: (s) => runOp(s, route('get', 'cost:big')),
  },
  {
    name: 'plain: HGETALL + PTTL',
    calls: 10_000,
    run: (_, p) => Promise.all([p.hgetall('cost:h-p'), p.pttl('cost:h-p')]),
  },
  ...wholeRead('hash', 'cost:h', '10 fields', 'plain: HGETALL + PTTL', 'WHOLE', 'HGETALL'),
  ...wholeRead('set', 'cost:m', '10 members', 'plain: HGETALL + PTTL', 'WHOLE', 'SMEMBERS'),
  {
    name: 'plain: ZRANGE 0 10 WITHSCORES + PTTL',
    calls: 10_000,
    run: (_, p) => Promise.all([p.zrange('cost:z', 0, 10, 'WITHSCORES'), p.pttl('cost:z')]),
  },
  ...wholeRead(
    'zset',
    'cost:z',
    '10 members',
    'plain: ZRANGE 0 10 WITHSCORES + PTTL',
    'ZRANGE',
    0,
    10,
    'WITHSCORES',
  ),
  {
    name: 'floor: 100 SET ... GET in one EVALSHA',
    calls: 1_000,
    run: (_, p) => {
      const keys = Array.from({ length: 100 }, (_, i) => `cost:floor:${i}`);
      return setEach(p, keys, Array<string>(keys.length).fill(VALUE));
    },
  },
  {
    name: 'string batch of 100 sets',
    calls: 1_000,
    against: 'floor: 100 SET ... GET in one EVALSHA',
    target: 1.2,
    run: (s) => runBatch(s, batchOf(100)),
  },
];

/** Redis's time so far: every command's usec (INFO commandstats) and its CPU (used_cpu_user + _sys), in µs. */
async function spent(redis: Redis): Promise<{ commands: number; cpu: number }> {
  const info = (await redis.info('commandstats')) + (await redis.info('cpu'));
  let commands = 0;
  for (const m of info.matchAll(/^cmdstat_(\w+):calls=\d+,usec=(\d+)/gm))
    if (m[1] !== 'info') commands += Number(m[2]);
  const cpu = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return { commands, cpu: (cpu('used_cpu_user') + cpu('used_cpu_sys')) * 1e6 };
}

async function main(): Promise<void> {
  const server = await startRedisServer();
  const pid = Number(readFileSync(path.join(server.dir, 'redis.pid'), 'utf8'));
  let reniced = true;
  try {
    execFileSync('renice', ['-n', '-15', '-p', String(pid)], { stdio: 'ignore' });
  } catch {
    reniced = false;
  }
  // 500 calls at once on a loaded machine: no 1 s command timeout.
  const config = loadConfig({ SVC_REDIS_URL: server.url, SVC_REDIS_COMMAND_TIMEOUT_MS: '60000' });
  const redis = createRedis(config);
  await redis.connect();
  // The service's probe (src/app.ts): Redis 7 lets whole hash and set reads be one bounded command.
  await new CapabilityWatch(redis, null, { log: () => undefined }).probe();
  // The plain client: ioredis with its own auto-pipelining (a turn's commands in one write).
  const plain = new Redis(server.url, { enableAutoPipelining: true });
  defineSetEach(plain);
  const admin = new Redis(server.url);
  await Promise.all([plain.set('cost:big-p', BIG), admin.set('cost:big', BIG)]);
  await Promise.all([
    admin.hset('cost:h-p', ...FIELDS),
    admin.hset('cost:h', ...FIELDS),
    admin.sadd('cost:m', ...FIELDS.slice(0, 10)),
    admin.zadd('cost:z', ...FIELDS.slice(0, 10).flatMap((m, i) => [i, m])),
  ]);
  const store: Store = { redis, keyspace: createKeyspace(''), deadlineMs: 10_000 };
  const perRequest: Record<string, { commands: number[]; cpu: number[] }> = {};
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of CASES) {
        await c.run(store, plain).catch((err: Error) => {
          throw new Error(`${c.name}: ${err.message}`);
        }); // loads the script
        await admin.config('RESETSTAT');
        const before = await spent(admin);
        for (let done = 0; done < c.calls; done += 500)
          await Promise.all(
            Array.from({ length: Math.min(500, c.calls - done) }, () => c.run(store, plain)),
          ).catch((err: Error) => {
            throw new Error(`${c.name}: ${err.message}`);
          });
        const after = await spent(admin);
        const row = perRequest[c.name] ?? { commands: [], cpu: [] };
        row.commands.push(after.commands / c.calls);
        row.cpu.push((after.cpu - before.cpu) / c.calls);
        perRequest[c.name] = row;
      }
    }
  } finally {
    redis.disconnect();
    plain.disconnect();
    admin.disconnect();
    await server.stop();
  }
  console.log(
    `Redis µs per request, median of ${ROUNDS} rounds (min): commands (INFO commandstats), CPU (used_cpu)`,
  );
  console.log(
    "(commandstats counts a script's commands twice: in its EVALSHA / FCALL and on their own; CPU is the figure)",
  );
  const fixed = (x: number) => x.toFixed(2).padStart(8);
  for (const c of CASES) {
    const { commands, cpu } = perRequest[c.name] as { commands: number[]; cpu: number[] };
    const base = c.against ? perRequest[c.against] : undefined;
    const ratio = base
      ? `  ${(median(commands) / median(base.commands)).toFixed(2)} x / ${(median(cpu) / median(base.cpu)).toFixed(2)} x ${c.target ? ` (target <= ${c.target} x)` : ''}`
      : '';
    console.log(
      `  ${c.name.padEnd(44)} ${fixed(median(commands))} (${Math.min(...commands).toFixed(2)}) ${fixed(median(cpu))} (${Math.min(...cpu).toFixed(2)})${ratio}`,
    );
  }
  if (!reniced)
    console.log('note: redis-server could not be reniced (not root): other load moves these figures');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
