// `node dist/bench/script-cost.js`: Redis's own time per call of the scripts that the hot paths send, from INFO
// commandstats, on a redis-server of its own that is given a higher priority than the rest of the machine (as root),
// so that another load moves the figures less. This is the Redis side of a request: what bounds a fleet of gateway
// instances in front of one Redis, whose commands run on one core. `npm run bench` gives it under load (redis µs/req).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../src/config';
import { runBatch, runOp } from '../src/engine/run';
import { strings } from '../src/families/string';
import type { RequestInput } from '../src/http/contract';
import type { Op } from '../src/ops/op';
import { createRedis } from '../src/redis/client';
import { createKeyspace } from '../src/redis/keys';
import type { Store } from '../src/redis/store';
import { startRedisServer } from '../tests/support/redis-server';
import { median } from './load';
import { VALUE } from './scenarios';

const ROUNDS = 5;
const bound = strings.bind({ maxValueBytes: 1 << 20 });
const route = (method: string, key: string, body: Record<string, unknown> = {}) => {
  const r = bound.routes.find((x) => x.method === method && x.path === '/store/string/{key}');
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

/** What each case sends, as the service builds it; `calls` per round. */
const CASES: { name: string; calls: number; run: (store: Store) => Promise<unknown> }[] = [
  {
    name: 'POST /store/string/{key} (typed write + ETag)',
    calls: 20_000,
    run: (s) => runOp(s, route('post', 'cost:s', { value: VALUE })),
  },
  // After the POST, which wrote its key.
  {
    name: 'GET /store/string/{key} (typed read + ETag)',
    calls: 20_000,
    run: (s) => runOp(s, route('get', 'cost:s')),
  },
  { name: 'string batch of 100 sets (typed-batch-n)', calls: 1_000, run: (s) => runBatch(s, batchOf(100)) },
];

async function main(): Promise<void> {
  const server = await startRedisServer();
  const pid = Number(readFileSync(path.join(server.dir, 'redis.pid'), 'utf8'));
  let reniced = true;
  try {
    execFileSync('renice', ['-n', '-15', '-p', String(pid)], { stdio: 'ignore' });
  } catch {
    reniced = false;
  }
  const config = loadConfig({ SVC_REDIS_URL: server.url });
  const redis = createRedis(config);
  await redis.connect();
  const store: Store = { redis, keyspace: createKeyspace(''), deadlineMs: 10_000 };
  const perCall: Record<string, number[]> = {};
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of CASES) {
        await c.run(store); // loads the script
        await redis.config('RESETSTAT');
        for (let done = 0; done < c.calls; done += 500)
          await Promise.all(Array.from({ length: Math.min(500, c.calls - done) }, () => c.run(store)));
        const stats = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await redis.info('commandstats'));
        const [calls, usec] = [Number(stats?.[1]), Number(stats?.[2])];
        perCall[c.name] = [...(perCall[c.name] ?? []), usec / calls];
      }
    }
  } finally {
    redis.disconnect();
    await server.stop();
  }
  console.log(`Redis µs per script call (INFO commandstats), median of ${ROUNDS} rounds (min):`);
  for (const c of CASES) {
    const xs = perCall[c.name] as number[];
    console.log(
      `  ${c.name.padEnd(48)} ${median(xs).toFixed(2).padStart(8)} (${Math.min(...xs).toFixed(2)})`,
    );
  }
  if (!reniced)
    console.log('note: redis-server could not be reniced (not root): other load moves these figures');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
