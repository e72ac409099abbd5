// The change feed's write side on a 3-master Redis Cluster: one stream per master, each event in its write's script.
// The service still refuses SVC_CHANGES_ENABLED on a Cluster (the reader is not multi-stream yet): these tests
// build the config past that check to exercise what is done, and pin the Redis behaviours the design rests on.
import calculateSlot from 'cluster-key-slot';
import Redis, { Cluster } from 'ioredis';
import request from 'supertest';
import { loadConfig } from '../src/config';
import { toEvent } from '../src/feed/event';
import { createLogger } from '../src/observability/logger';
import { createRedis, type RedisClient } from '../src/redis/client';
import { ClusterStreams, tagForSlot } from '../src/redis/feed-streams';
import { createKeyspace } from '../src/redis/keys';
import { createService, type Service } from '../src/service';
import { contract } from './support/app';
import { cleanup, testPrefix } from './support/keys';
import { type RedisCluster, startRedisCluster } from './support/redis-cluster';

let cluster: RedisCluster;
let service: Service;
let raw: Cluster;
let scripts: RedisClient;
let streams: ClusterStreams;
const prefix = testPrefix('feed-cluster');
const { changesIn } = createKeyspace(prefix);

beforeAll(async () => {
  cluster = await startRedisCluster();
  const base = loadConfig({
    SVC_REDIS_URL: 'redis://127.0.0.1:6379',
    SVC_REDIS_CLUSTER_NODES: cluster.nodes,
    SVC_KEY_PREFIX: prefix,
    SVC_RATE_LIMIT_ENABLED: 'false',
    SVC_PROTECTED_MODE: 'false',
  });
  // Past loadConfig's refusal (see the file's first lines).
  const config = { ...base, changes: { ...base.changes, enabled: true } };
  service = createService(config, { logger: createLogger(config.log, true), contract: contract() });
  await service.connect({ waitForLimiter: true });
  scripts = createRedis(config);
  await scripts.connect();
  raw = new Cluster(
    cluster.nodes.split(',').map((hp) => ({ host: '127.0.0.1', port: Number(hp.split(':')[1]) })),
  );
  await raw.ping();
  streams = new ClusterStreams(raw, changesIn);
}, 60_000);

afterAll(async () => {
  if (raw) await cleanup(raw, prefix).catch(() => 0);
  await service?.close();
  scripts?.disconnect();
  raw?.disconnect();
  await cluster?.stop();
});

const api = () => request(service.data);
/** Keys of this file spread over every master (checked below). */
const KEYS = Array.from({ length: 12 }, (_, i) => `k${i}`);
const nodeOf = (key: string) => raw.slots[calculateSlot(prefix + key)]?.[0] as string;

/** Every event in every master's stream, with the stream it is in. */
async function allEvents() {
  const found: { stream: string; key: string; type: string; op: string }[] = [];
  for (const stream of streams.all()) {
    for (const entry of await raw.xrange(stream, '-', '+')) {
      const { key, type, op } = toEvent(entry);
      found.push({ stream, key, type, op });
    }
  }
  return found;
}

test('a tag is found for any slot, and each master has a stream in a slot of its own', () => {
  for (const slot of [0, 1, 5460, 5461, 16383]) expect(calculateSlot(tagForSlot(slot))).toBe(slot);
  const all = streams.all();
  expect(all).toHaveLength(3);
  expect(new Set(all.map((stream) => raw.slots[calculateSlot(stream)]?.[0])).size).toBe(3);
  expect(new Set(KEYS.map(nodeOf)).size).toBe(3);
  // A prefix with a hash tag of its own does not pull every stream into its slot: the stream's tag comes first.
  const tagged = new ClusterStreams(raw, createKeyspace('{tenant-a}:').changesIn).all();
  expect(new Set(tagged.map((stream) => raw.slots[calculateSlot(stream)]?.[0])).size).toBe(3);
});

test('every write over all masters has exactly one event, in the stream of its own master', async () => {
  for (const key of KEYS) {
    await api().post(`/store/string/${key}`).send({ value: '1' }).expect(201);
    await api().post(`/store/string/${key}/incr`).send({ by: 0 }).expect(200); // changes nothing: no event
    await api().post(`/store/string/${key}/incr`).send({ by: 2 }).expect(200);
    await api().post(`/store/string/${key}/expire`).send({ ttl: 100 }).expect(200);
  }
  await api()
    .post('/store/hash/h1')
    .send({ fields: { a: '1' } })
    .expect(201);
  await api()
    .post('/store/set/s1')
    .send({ members: ['x'] })
    .expect(201);
  // A batch over several slots: one script per slot, each with the stream of its master.
  const res = await api()
    .post('/store/string/batch')
    .send({ operations: KEYS.map((key) => ({ type: 'delete', key })) })
    .expect(200);
  expect(res.body.atomic).toBe(false);
  await api().delete('/store/keys/h1').expect(200);
  await api().delete('/store/keys/h1').expect(200); // nothing deleted: no event

  const events = await allEvents();
  const expected = [
    ...KEYS.flatMap((key) => [
      { key, type: 'string', op: 'set' },
      { key, type: 'string', op: 'incrby' },
      { key, type: 'string', op: 'expire' },
      { key, type: 'string', op: 'del' },
    ]),
    { key: 'h1', type: 'hash', op: 'hset' },
    { key: 's1', type: 'set', op: 'sadd' },
    { key: 'h1', type: 'hash', op: 'del' },
  ];
  const sort = <T extends { key: string; op: string }>(list: T[]) =>
    [...list].sort((a, b) => `${a.key} ${a.op}`.localeCompare(`${b.key} ${b.op}`));
  expect(sort(events.map(({ key, type, op }) => ({ key, type, op })))).toEqual(sort(expected));
  for (const event of events) expect(event.stream).toBe(streams.forNode(nodeOf(event.key)));
}, 60_000);

test('a stream not on the key node (a stale slot map) is refused before the write: no write, no event', async () => {
  const key = `${prefix}stale`;
  const elsewhere = streams.all().find((s) => s !== streams.forKey(key)) as string;
  const before = (await allEvents()).length;
  await expect(
    scripts.typedWrite(key, 'string', '', '0', '', '', '0', 'SET', 'v', elsewhere),
  ).rejects.toThrow(/^FEED_ELSEWHERE/);
  expect(await raw.exists(key)).toBe(0);
  expect((await allEvents()).length).toBe(before);
  // With the right stream the same call writes, with its event.
  await scripts.typedWrite(key, 'string', '', '0', '', '', '0', 'SET', 'v', streams.forKey(key));
  expect(await raw.get(key)).toBe('v');
  expect((await allEvents()).length).toBe(before + 1);
});

test('a flush under the key prefix leaves a flush event in every master stream', async () => {
  await api().post('/store/string/f').send({ value: 'v' }).expect(201);
  const before = await allEvents();
  await request(service.admin ?? service.data)
    .post('/store/admin/flush')
    .expect(200);
  const flushes = (await allEvents()).slice(0).filter((e) => e.op === 'flush');
  expect(flushes.length - before.filter((e) => e.op === 'flush').length).toBe(3);
  expect(new Set(flushes.map((e) => e.stream)).size).toBe(3);
});

describe('the Redis 7.0 behaviours the design rests on', () => {
  let node: Redis;
  let local: string;
  let remote: string;
  beforeAll(() => {
    const address = nodeOf(KEYS[0] as string);
    const [host, port] = address.split(':');
    node = new Redis(Number(port), host as string);
    local = streams.forNode(address);
    remote = streams.all().find((s) => s !== local) as string;
  });
  afterAll(() => node.disconnect());
  const key = () => prefix + (KEYS[0] as string);
  const write = `redis.call('SET', KEYS[1], 'x'); return redis.call('XADD', ARGV[1], '*', 'k', KEYS[1])`;

  test('a script without shebang may reach an undeclared key of another slot on its node', async () => {
    expect(calculateSlot(local)).not.toBe(calculateSlot(key()));
    await expect(node.eval(write, 1, key(), local)).resolves.toMatch(/^\d+-\d+$/);
  });

  test('with a shebang, only the allow-cross-slot-keys flag allows it', async () => {
    await expect(node.eval(`#!lua\n${write}`, 1, key(), local)).rejects.toThrow(
      /do not hash to the same slot/,
    );
    await expect(node.eval(`#!lua flags=allow-cross-slot-keys\n${write}`, 1, key(), local)).resolves.toMatch(
      /^\d+-\d+$/,
    );
  });

  test('declared keys of two slots are refused before the script runs, flag or not', async () => {
    const script = `#!lua flags=allow-cross-slot-keys\nreturn 1`;
    await expect(node.eval(script, 2, key(), local)).rejects.toThrow(/CROSSSLOT/);
  });

  test('a key of another node is refused only when the script touches it: after a write, the write stays', async () => {
    await node.del(key());
    await expect(node.eval(write, 1, key(), remote)).rejects.toThrow(/non local key/);
    expect(await node.exists(key())).toBe(1);
    await node.del(key());
    // Hence the check first (client.ts feedHeader): redis.pcall answers the refusal as a value.
    const check = `local r = redis.pcall('EXISTS', ARGV[1]); if type(r) == 'table' and r.err then return 'elsewhere' end; return 'here'`;
    await expect(node.eval(check, 1, key(), remote)).resolves.toBe('elsewhere');
    await expect(node.eval(check, 1, key(), local)).resolves.toBe('here');
  });
});
