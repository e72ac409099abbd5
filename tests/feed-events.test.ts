// The change feed's events are written with the data: one per write that changed something, none otherwise.
import request from 'supertest';
import { FAMILIES } from '../src/families';

type Family = (typeof FAMILIES)[number];

import { runBatch, runOp } from '../src/engine/run';
import type { BatchItem, BoundRoute } from '../src/families/family';
import type { Op } from '../src/ops/op';
import type { TestApp } from './support/app';
import { eventsAfter, feedApp, lastId, streamOf } from './support/feed';

let t: TestApp;
beforeAll(async () => {
  t = await feedApp('feed-events', 10);
});
afterAll(() => t.close());

const LIMITS = { maxValueBytes: 1024 };
/**
 * Inputs every write of a family accepts: field 'f' and member 'm' are in each family's sample, so deletes of them
 * change something. `members` is a list, or (sorted sets adding) a map to scores: each shape is tried in turn, the
 * first that builds is used.
 */
const MEMBER_SHAPES = (family: Family): unknown[] =>
  family.redisType === 'zset' ? [{ m: 2 }, ['m']] : [['m']];
/** `value` 'a' is in the list sample (RPUSH a b), so a list remove changes something. */
const FIELDS = {
  key: 'k',
  field: 'f',
  member: 'm',
  value: 'a',
  values: ['v'],
  index: 0,
  start: 0,
  stop: 0,
  fields: { f: 'w' },
  score: 2,
  ttl: 5,
};

/** A hash field's `ttl` is its own expiry (HEXPIRE), refused on servers without it: field writes go without one. */
const fieldsFor = (fieldWrite: boolean) => {
  const { ttl: _fieldTtl, ...rest } = FIELDS;
  return fieldWrite ? rest : FIELDS;
};

function firstBuilt<T>(family: Family, build: (members: unknown) => T): T {
  const shapes = MEMBER_SHAPES(family);
  for (const members of shapes.slice(0, -1)) {
    try {
      return build(members);
    } catch {
      // Not this shape: the next one.
    }
  }
  return build(shapes[shapes.length - 1]);
}

const routeOp = (family: Family, route: BoundRoute) =>
  firstBuilt(family, (members) =>
    route.build({
      params: { key: 'k', field: 'f', member: 'm', index: '0' },
      headers: {},
      query: {},
      body: { ...fieldsFor(route.path.includes('/field/')), members, keys: ['a', 'b'] },
    }),
  );
const itemOp = (family: Family, type: string, build: (item: BatchItem) => Op) =>
  firstBuilt(family, (members) => build({ ...fieldsFor(type === 'setField'), type, members } as BatchItem));

interface Trial {
  succeeded: boolean;
  events: number;
  unchanged: boolean;
}

/** Runs `op` on key 'k' as `seed` leaves it (the family's sample with an expiry, or nothing): what it produced. */
async function trial(family: (typeof FAMILIES)[number], seeded: boolean, run: () => Promise<unknown>) {
  const key = `${t.prefix}k`;
  await t.raw.del(key);
  if (seeded) {
    const [command, ...args] = family.sample;
    await t.raw.call(command, key, ...args);
    await t.raw.expire(key, 1000);
  }
  const before = [await t.raw.dump(key), (await t.raw.ttl(key)) > 0];
  const since = await lastId(t);
  const succeeded = await run().then(
    () => true,
    () => false,
  );
  const events = await eventsAfter(t, since);
  for (const e of events) expect(e).toMatchObject({ key: 'k', type: family.redisType });
  const after = [await t.raw.dump(key), (await t.raw.ttl(key)) > 0];
  return { succeeded, events: events.length, unchanged: JSON.stringify(before) === JSON.stringify(after) };
}

/** A failed write leaves no event, a write that left the key as it was none either, and no write more than one. */
function expectConsistent(trials: Trial[]): void {
  for (const { succeeded, events, unchanged } of trials) {
    expect(events).toBeLessThanOrEqual(1);
    if (!succeeded) expect(events).toBe(0);
    if (unchanged && events === 1) expect(succeeded).toBe(true);
    if (succeeded && events === 0) expect(unchanged).toBe(true);
  }
  // On the sample or on a missing key, every write changes something once.
  expect(trials.some((x) => x.succeeded && x.events === 1)).toBe(true);
}

async function bothWays(family: (typeof FAMILIES)[number], run: () => Promise<unknown>) {
  return [await trial(family, true, run), await trial(family, false, run)];
}

describe.each(FAMILIES.map((f) => [f.name, f] as const))('the %s family', (_name, family) => {
  const { routes, batch } = family.bind(LIMITS);
  const writing = routes.filter((r) => routeOp(family, r).writes);

  test.each(writing.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))(
    'when %s writes, then exactly one event, and none when it fails or changes nothing',
    async (_route, route) => {
      expectConsistent(await bothWays(family, () => runOp(t.context.store, routeOp(family, route))));
    },
  );

  const items = [...batch].filter(([type, build]) => itemOp(family, type, build).writes);
  test.each(items.map(([type, build]) => [type, build] as const))(
    'when a batch item %s writes, then exactly one event, and none when it fails or changes nothing',
    async (type, build) => {
      const op: Op = itemOp(family, type, build);
      const run = async () => {
        const [outcome] = (await runBatch(t.context.store, [op])).outcomes;
        if (outcome instanceof Error) throw outcome;
      };
      expectConsistent(await bothWays(family, run));
    },
  );
});

describe('an event', () => {
  test('when a hash field is set, then the event names the key without SVC_KEY_PREFIX, its type and the command', async () => {
    const since = await lastId(t);
    await request(t.data).post('/store/hash/profile/field/name').send({ value: 'Ada' }).expect(201);
    const [event] = await eventsAfter(t, since);
    expect(event).toEqual({
      id: expect.stringMatching(/^\d+-\d+$/),
      key: 'profile',
      type: 'hash',
      op: 'hset',
      time: expect.any(String),
    });
    const [, fields] = (await t.raw.xrange(streamOf(t), event?.id as string, event?.id as string))[0] ?? [];
    expect(fields).not.toContain('Ada');
  });

  test('when a batch writes three keys, then three events in order, and none for its reads and failures', async () => {
    await t.raw.set(`${t.prefix}b-hash`, 'not a hash');
    const since = await lastId(t);
    const res = await request(t.data)
      .post('/store/hash/batch')
      .send({
        operations: [
          { type: 'set', key: 'b1', fields: { a: '1' } },
          { type: 'get', key: 'b1' },
          { type: 'set', key: 'b-hash', fields: { a: '1' } },
          { type: 'setField', key: 'b2', field: 'a', value: '2' },
          { type: 'delete', key: 'b1' },
        ],
      });
    expect(res.status).toBe(200);
    const events = await eventsAfter(t, since);
    expect(events.map((e) => [e.key, e.op])).toEqual([
      ['b1', 'hset'],
      ['b2', 'hset'],
      ['b1', 'del'],
    ]);
  });

  test('when nothing changes (a present member, a missing key deleted, a key without expiry persisted, +0), then no event', async () => {
    await request(t.data)
      .post('/store/set/s')
      .send({ members: ['m'] });
    await request(t.data)
      .post('/store/string/n/incr')
      .set('Content-Type', 'application/json')
      .send({ by: 3 });
    const since = await lastId(t);
    await request(t.data).post('/store/set/s/member/m').set('Content-Type', 'application/json').expect(200);
    await request(t.data).delete('/store/string/nothing-here').expect(200);
    await request(t.data).delete('/store/set/s/ttl').expect(200);
    await request(t.data)
      .post('/store/string/n/incr')
      .set('Content-Type', 'application/json')
      .send({ by: 0 })
      .expect(200);
    await request(t.data).post('/store/string/s/expire').send({ ttl: 5 }).expect(409);
    expect(await eventsAfter(t, since)).toEqual([]);
  });

  test('when a sorted set member gets a new score, then an event (ZADD counts only members added), and +0 none', async () => {
    await request(t.data)
      .post('/store/zset/z/member/m')
      .set('Content-Type', 'application/json')
      .send({ score: 1 })
      .expect(201);
    const since = await lastId(t);
    await request(t.data)
      .post('/store/zset/z/member/m')
      .set('Content-Type', 'application/json')
      .send({ score: 5 })
      .expect(200);
    await request(t.data)
      .post('/store/zset/z/member/m/incr')
      .set('Content-Type', 'application/json')
      .send({ by: 0 })
      .expect(200);
    await request(t.data)
      .post('/store/zset/z/member/m/incr')
      .set('Content-Type', 'application/json')
      .send({ by: 2 })
      .expect(200);
    expect((await eventsAfter(t, since)).map((e) => [e.key, e.type, e.op])).toEqual([
      ['z', 'zset', 'zadd'],
      ['z', 'zset', 'zincrby'],
    ]);
    expect(await t.raw.zscore(`${t.prefix}z`, 'm')).toBe('7');
  });

  test('when a waiting list pop gets a pushed item, then a push event and a blmpop event (appended after the pop)', async () => {
    const since = await lastId(t);
    const waiting = new Promise<request.Response>((resolve, reject) =>
      request(t.data)
        .post('/store/list/queue/pop')
        .set('Content-Type', 'application/json')
        .send({ wait: 20 })
        .then(resolve, reject),
    );
    const waiters = t.context.store.waiters as { waiting: number };
    for (let i = 0; i < 1000 && waiters.waiting === 0; i++) await new Promise((r) => setTimeout(r, 20));
    await request(t.data)
      .post('/store/list/queue/push')
      .send({ values: ['job'] })
      .expect(201);
    expect((await waiting).body).toEqual({ success: true, values: ['job'] });
    expect((await eventsAfter(t, since)).map((e) => [e.key, e.type, e.op])).toEqual([
      ['queue', 'list', 'rpush'],
      ['queue', 'list', 'blmpop'],
    ]);
  });

  test('when a key is deleted under If-Match, then one del event too', async () => {
    await request(t.data).post('/store/string/tagged').send({ value: 'v' });
    const since = await lastId(t);
    await request(t.data).delete('/store/keys/tagged').set('If-Match', '*').expect(200);
    expect((await eventsAfter(t, since)).map((e) => [e.key, e.type, e.op])).toEqual([
      ['tagged', 'string', 'del'],
    ]);
  });

  test('when a key of any type is deleted through /store/keys, then one del event with its type', async () => {
    await request(t.data)
      .post('/store/set/any')
      .send({ members: ['m'] });
    const since = await lastId(t);
    await request(t.data).delete('/store/keys/any').expect(200);
    await request(t.data).delete('/store/keys/any').expect(200);
    expect((await eventsAfter(t, since)).map((e) => [e.key, e.type, e.op])).toEqual([['any', 'set', 'del']]);
  });

  test('when an admin flush runs under a prefix, then one flush event with no key', async () => {
    await request(t.data).post('/store/string/f1').send({ value: 'v' });
    const since = await lastId(t);
    await request(t.data).post('/store/admin/flush').set('Content-Type', 'application/json').expect(200);
    expect((await eventsAfter(t, since)).map((e) => [e.key, e.type, e.op])).toEqual([['', '', 'flush']]);
  });
});

describe('retention', () => {
  test('when more events than SVC_CHANGES_MAXLEN are written, then the stream is trimmed near it', async () => {
    const small = await feedApp('feed-maxlen', 10, { SVC_CHANGES_MAXLEN: '100' });
    try {
      const operations = Array.from({ length: 1000 }, (_, i) => ({ type: 'set', key: `m${i}`, value: 'v' }));
      await request(small.data).post('/store/string/batch').send({ operations }).expect(200);
      const length = await small.raw.xlen(streamOf(small));
      expect(length).toBeGreaterThanOrEqual(100);
      expect(length).toBeLessThan(1000);
    } finally {
      await small.close();
    }
  });
});
