import calculateSlot from 'cluster-key-slot';
import Redis, { Cluster } from 'ioredis';
import request from 'supertest';
import WebSocket from 'ws';
import { flush } from '../src/admin/redis';
import type { Config } from '../src/config';
import { toEvent } from '../src/feed/event';
import type { Listener } from '../src/http/server';
import { createRedis, type RedisClient } from '../src/redis/client';
import { ClusterStreams, tagForSlot } from '../src/redis/feed-streams';
import { scriptMode } from '../src/redis/functions';
import { createKeyspace } from '../src/redis/keys';
import type { Service } from '../src/service';
import { clusterFeedService, type SseClient, sse } from './support/feed';
import { cleanup, testPrefix } from './support/keys';
import { type RedisCluster, startRedisCluster } from './support/redis-cluster';

let cluster: RedisCluster;
let service: Service;
let raw: Cluster;
let scripts: RedisClient;
let streams: ClusterStreams;
let listener: Listener;
let base: string;
const prefix = testPrefix('feed-cluster');
const { changesIn } = createKeyspace(prefix);

beforeAll(async () => {
  cluster = await startRedisCluster();
  let config: Config;
  ({ config, service, listener, base } = await clusterFeedService(cluster.nodes, prefix, {
    SVC_CHANGES_HEARTBEAT_MS: '200',
  }));
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
  await listener?.close(1000);
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
    await api()
      .post(`/store/string/${key}/incr`)
      .set('Content-Type', 'application/json')
      .send({ by: 0 })
      .expect(200); // changes nothing: no event
    await api()
      .post(`/store/string/${key}/incr`)
      .set('Content-Type', 'application/json')
      .send({ by: 2 })
      .expect(200);
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

test('writes run as functions of a library loaded on every master; a batch of plain sets has one event per set on its master', async () => {
  expect(scriptMode(service.redis)).toBe('functions');
  for (const node of raw.nodes('master'))
    expect(((await node.call('FUNCTION', 'LIST')) as unknown[]).length).toBeGreaterThan(0);
  const operations = KEYS.map((key) => ({ type: 'set', key: `batch-${key}`, value: 'v' }));
  const res = await api().post('/store/string/batch').send({ operations }).expect(200);
  expect(res.body.results.every((r: { success: boolean }) => r.success)).toBe(true);
  const added = (await allEvents()).filter((e) => e.key.startsWith('batch-'));
  expect(added.map((e) => e.key).sort()).toEqual(operations.map((o) => o.key).sort());
  for (const e of added) expect(e.stream).toBe(streams.forKey(prefix + e.key));
  // A read that answers an ETag (typedEtag: a no-writes function, named the stream like the writes) reads as before.
  await api()
    .post('/store/hash/batch-h')
    .send({ fields: { f: 'v' } })
    .expect(201);
  const hash = await api().get('/store/hash/batch-h').expect(200);
  expect(hash.body.fields).toEqual({ f: 'v' });
  // A master that lost the library (FUNCTION FLUSH; a new master is the same): the write that finds it missing
  // loads it again on every master and is sent once more.
  const [first] = raw.nodes('master');
  await first?.call('FUNCTION', 'FLUSH');
  for (const key of KEYS) await api().post(`/store/string/again-${key}`).send({ value: 'v' }).expect(201);
  for (const node of raw.nodes('master'))
    expect(((await node.call('FUNCTION', 'LIST')) as unknown[]).length).toBeGreaterThan(0);
  expect((await allEvents()).filter((e) => e.key.startsWith('again-')).length).toBe(KEYS.length);
});

test('a flush under the key prefix leaves a flush event in every master stream', async () => {
  await api().post('/store/string/f').send({ value: 'v' }).expect(201);
  const before = await allEvents();
  await request(service.admin ?? service.data)
    .post('/store/admin/flush')
    .set('Content-Type', 'application/json')
    .expect(200);
  const flushes = (await allEvents()).slice(0).filter((e) => e.op === 'flush');
  expect(flushes.length - before.filter((e) => e.op === 'flush').length).toBe(3);
  expect(new Set(flushes.map((e) => e.stream)).size).toBe(3);
});

/** Every long-poll page from `since` until an empty one: the events and the last `next`. */
async function pollAll(since: string, limit = 5) {
  const events: { id: string; key: string; op: string }[] = [];
  let next = since;
  for (let pages = 0; pages < 100; pages++) {
    const res = await api().get('/store/changes').query({ since: next, limit }).expect(200);
    next = res.body.next;
    if (res.body.events.length === 0) break;
    events.push(...res.body.events);
  }
  return { events, next };
}

const writeAll = async (tag: string) => {
  for (const key of KEYS) await api().post(`/store/string/${tag}${key}`).send({ value: 'v' }).expect(201);
};
const sortedKeys = (list: { key: string }[]) => list.map((e) => e.key).sort();

describe('reading the feed on a Cluster', () => {
  test('a long-poll cursor is opaque and holds a position per master stream; paging from it loses nothing', async () => {
    const start = (await api().get('/store/changes').expect(200)).body.next as string;
    expect(start).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Object.keys(JSON.parse(Buffer.from(start, 'base64url').toString())).length).toBe(3);
    await writeAll('p1-');
    const first = await pollAll(start);
    expect(sortedKeys(first.events)).toEqual(KEYS.map((k) => `p1-${k}`).sort());
    await writeAll('p2-');
    // Resuming from the last page's `next`: only what came after, each once.
    const second = await pollAll(first.next, 7);
    expect(sortedKeys(second.events)).toEqual(KEYS.map((k) => `p2-${k}`).sort());
  }, 60_000);

  test('a long-poll that waits answers with the first write on any master', async () => {
    const { next } = (await api().get('/store/changes').expect(200)).body;
    const waiting = api().get('/store/changes').query({ since: next, wait: 20 });
    const answered = waiting.then((res) => res);
    // Give the poll time to subscribe (not required for correctness: it re-reads the backlog once subscribed).
    await new Promise((resolve) => setTimeout(resolve, 200));
    await api().post(`/store/string/w-${KEYS[5]}`).send({ value: 'v' }).expect(201);
    const res = await answered;
    expect(res.status).toBe(200);
    expect(res.body.events.map((e: { key: string }) => e.key)).toEqual([`w-${KEYS[5]}`]);
  }, 60_000);

  test('SSE: every write over all masters once; Last-Event-ID (a cursor) resumes with nothing lost or twice', async () => {
    const { next } = (await api().get('/store/changes').expect(200)).body;
    let client: SseClient = sse(base, `?since=${next}&prefix=e1-`);
    try {
      expect(await client.status).toBe(200);
      await writeAll('e1-');
      const got = await client.waitFor(KEYS.length);
      expect(sortedKeys(got.map((m) => m.data as { key: string }))).toEqual(
        KEYS.map((k) => `e1-${k}`).sort(),
      );
      client.close();
      const last = got[got.length - 1]?.id as string;
      expect(Object.keys(JSON.parse(Buffer.from(last, 'base64url').toString())).length).toBe(3);
      // Written while no client follows: the resume point must bring exactly these.
      for (const key of KEYS)
        await api().post(`/store/string/e1-${key}/expire`).send({ ttl: 100 }).expect(200);
      client = sse(base, '?prefix=e1-', { 'Last-Event-ID': last });
      const resumed = await client.waitFor(KEYS.length);
      expect(resumed.map((m) => (m.data as { op: string }).op)).toEqual(KEYS.map(() => 'expire'));
      expect(sortedKeys(resumed.map((m) => m.data as { key: string }))).toEqual(
        KEYS.map((k) => `e1-${k}`).sort(),
      );
      // And live after it: one more write arrives once.
      await api().post(`/store/string/e1-${KEYS[0]}`).send({ value: 'w' }).expect(200);
      const live = await client.waitFor(KEYS.length + 1);
      expect(live[KEYS.length]?.data).toMatchObject({ key: `e1-${KEYS[0]}` });
    } finally {
      client.close();
    }
  }, 60_000);

  test('a cursor beyond one stream retention is a reset (410 with where to go on from)', async () => {
    const { next } = (await api().get('/store/changes').expect(200)).body;
    await writeAll('r1-');
    // One master's stream loses everything up to now (as a trim under SVC_CHANGES_MAXLEN would), then goes on.
    const stream = streams.forKey(`${prefix}r1-${KEYS[0]}`);
    await raw.xtrim(stream, 'MAXLEN', 0);
    await api().post(`/store/string/r1-${KEYS[0]}`).send({ value: 'w' }).expect(200);
    const res = await api().get('/store/changes').query({ since: next }).expect(410);
    expect(res.body).toMatchObject({ error: 'changes_reset', details: { since: next } });
    // Going on from `next`: no reset any more.
    await api().get('/store/changes').query({ since: res.body.details.next }).expect(200);
  }, 60_000);

  test('WebSocket: each change carries its cursor; resuming with it as since brings what came after, once', async () => {
    const { next } = (await api().get('/store/changes').expect(200)).body;
    const open = (since: string) => {
      const ws = new WebSocket(`${base.replace('http', 'ws')}/store/changes/ws?prefix=ws1-&since=${since}`);
      const messages: { key: string; op: string; cursor: string }[] = [];
      ws.on('message', (data) => messages.push(JSON.parse(String(data))));
      const until = async (count: number) => {
        for (let i = 0; i < 400 && messages.length < count; i++) await new Promise((r) => setTimeout(r, 50));
        expect(messages.length).toBeGreaterThanOrEqual(count);
        return messages.slice(0, count);
      };
      return { ws, messages, until };
    };
    const first = open(next);
    try {
      await writeAll('ws1-');
      const got = await first.until(KEYS.length);
      expect(sortedKeys(got)).toEqual(KEYS.map((k) => `ws1-${k}`).sort());
      const cursor = got[got.length - 1]?.cursor as string;
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      first.ws.close();
      for (const key of KEYS) await api().delete(`/store/keys/ws1-${key}`).expect(200);
      const second = open(cursor);
      try {
        const resumed = await second.until(KEYS.length);
        expect(resumed.map((m) => m.op)).toEqual(KEYS.map(() => 'del'));
        await new Promise((r) => setTimeout(r, 300));
        expect(second.messages).toHaveLength(KEYS.length);
      } finally {
        second.ws.close();
      }
    } finally {
      first.ws.close();
    }
  }, 60_000);

  test('a resume point that is no cursor of this feed is a 400', async () => {
    for (const since of ['1700000000000-0', 'not-base64!', Buffer.from('{"ZZ":"1-0"}').toString('base64url')])
      await api().get('/store/changes').query({ since }).expect(400);
  });
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

describe('a resharding that moves a master lowest slot (and its stream) to another master', () => {
  /** Moves `slot` with its keys from the master at `from` to the master at `to` (as redis-cli --cluster reshard). */
  async function moveSlot(slot: number, from: string, to: string) {
    const node = (address: string) => new Redis(Number(address.split(':')[1]), '127.0.0.1');
    const [source, target] = [node(from), node(to)];
    const others = cluster.servers.map((s) => new Redis(s.port, '127.0.0.1'));
    try {
      const [sourceId, targetId] = await Promise.all([source.cluster('MYID'), target.cluster('MYID')]);
      await target.cluster('SETSLOT', slot, 'IMPORTING', sourceId as string);
      await source.cluster('SETSLOT', slot, 'MIGRATING', targetId as string);
      for (;;) {
        const keys = (await source.cluster('GETKEYSINSLOT', slot, 100)) as string[];
        if (keys.length === 0) break;
        await source.migrate('127.0.0.1', Number(to.split(':')[1]), '', 0, 10_000, 'KEYS', ...keys);
      }
      for (const c of [target, source, ...others])
        await c.cluster('SETSLOT', slot, 'NODE', targetId as string);
    } finally {
      for (const c of [source, target, ...others]) c.disconnect();
    }
  }

  /** A write, retried while the Cluster answers 503 (a slot map out of date: nothing was written). */
  async function writeRetrying(key: string) {
    for (let i = 0; ; i++) {
      const res = await api().post(`/store/string/${key}`).send({ value: 'v' });
      if (res.status !== 503 || i === 50) return expect(res.status).toBe(201);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  test('followers and cursors from before miss nothing, and a new reader finds the moved stream', async () => {
    const { next } = (await api().get('/store/changes').expect(200)).body;
    const client = sse(base, `?since=${next}&prefix=m1-`);
    try {
      expect(await client.status).toBe(200);
      const first = nodeOf(KEYS[0] as string);
      const moved = streams.forNode(first);
      const lowest = raw.slots.findIndex((owners) => owners?.[0] === first);
      const to = raw.slots.find((owners) => owners?.[0] !== first)?.[0] as string;
      await moveSlot(lowest, first, to);
      await raw.refreshSlotsCache();
      // Keys in the moved slot and everywhere else: each write has its event, delivered once.
      const inMoved = Array.from({ length: 2000 }, (_, i) => `m1-x${i}`)
        .filter((k) => calculateSlot(prefix + k) === lowest)
        .slice(0, 2);
      const written = [...KEYS.map((k) => `m1-${k}`), ...inMoved];
      for (const key of written) await writeRetrying(key);
      const got = await client.waitFor(written.length, 30_000);
      expect(sortedKeys(got.map((m) => m.data as { key: string }))).toEqual([...written].sort());
      // The long-poll from the cursor of before: the same events, once each.
      const polled = await pollAll(next, 50);
      expect(sortedKeys(polled.events.filter((e) => e.key.startsWith('m1-')))).toEqual([...written].sort());
      // A reader started now (a restarted instance) finds the moved stream by its SCAN.
      const fresh = new ClusterStreams(raw, changesIn);
      await fresh.refresh();
      expect(fresh.all()).toContain(moved);
      expect(raw.slots[calculateSlot(moved)]?.[0]).toBe(to);
    } finally {
      client.close();
    }
  }, 90_000);
});

// Last: it empties the whole test Cluster.
test('a flush of the whole database leaves exactly one flush event in each master stream', async () => {
  const maxlen = 1000;
  await flush(raw as unknown as RedisClient, createKeyspace(''), { key: 'unused', maxlen, streams });
  const masters = raw.nodes('master').map((n) => streams.forNode(`${n.options.host}:${n.options.port}`));
  expect(masters).toHaveLength(3);
  for (const stream of masters) {
    const entries = await raw.xrange(stream, '-', '+');
    expect(entries.map((entry) => toEvent(entry).op)).toEqual(['flush']);
  }
});
