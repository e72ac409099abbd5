// The change feed as long-poll JSON: pages, resume by id, waiting, filters, tenants, retention and the subscriber cap.
import request from 'supertest';
import { compareIds } from '../src/feed/event';
import type { TestApp } from './support/app';
import { testApp } from './support/app';
import { apiKey, bearer } from './support/auth';
import { feedApp, streamOf } from './support/feed';
import { expectSchema } from './support/schemas';

const tenant = apiKey('tenant', ['read', 'write'], 'tenant-a:');
const admin = apiKey('admin', ['read', 'write', 'admin']);
let t: TestApp;
beforeAll(async () => {
  t = await feedApp('feed-poll', 11, { SVC_API_KEYS: JSON.stringify({ keys: [tenant, admin] }) });
});
afterAll(() => t.close());

const as = (who: { key: string }, req: request.Test) => req.set('Authorization', bearer(who));
const changes = (query: Record<string, string | number> = {}, who = admin) =>
  as(who, request(t.data).get('/store/changes').query(query));
const write = (key: string, value = 'v', who = admin) =>
  as(who, request(t.data).post(`/store/string/${key}`))
    .send({ value })
    .expect((r) => expect(r.status).toBeLessThan(300));

describe('a long-poll', () => {
  test('when it names no since, then an empty page and the current end, from which the next writes follow', async () => {
    const first = await changes();
    expect(first.status).toBe(200);
    expectSchema('ChangesPage', first.body);
    expect(first.body.events).toEqual([]);
    await write('p1');
    await write('p2');
    const next = await changes({ since: first.body.next });
    expect(next.body.events.map((e: { key: string; op: string }) => [e.key, e.op])).toEqual([
      ['p1', 'set'],
      ['p2', 'set'],
    ]);
    // `next` is at or after the last event (Redis's clock when the stream was read to its end), never another's id.
    expect(compareIds(next.body.next, next.body.events[1].id)).toBeGreaterThanOrEqual(0);
    expect((await changes({ since: next.body.next })).body.events).toEqual([]);
  });

  test('when a limit cuts the events into pages, then following next gives each event once, in order', async () => {
    const { next: start } = (await changes()).body;
    for (const key of ['l1', 'l2', 'l3', 'l4', 'l5']) await write(key);
    const seen: string[] = [];
    let since = start;
    for (let i = 0; i < 5; i++) {
      const page = (await changes({ since, limit: 2 })).body;
      seen.push(...page.events.map((e: { key: string }) => e.key));
      since = page.next;
      if (page.events.length === 0) break;
    }
    expect(seen).toEqual(['l1', 'l2', 'l3', 'l4', 'l5']);
  });

  test('when it waits and a write comes, then it answers with that write', async () => {
    const { next } = (await changes()).body;
    const waiting = changes({ since: next, wait: 30 });
    const answered = waiting.then((res) => res);
    // The write is retried until the poll has seen it, so that the test does not race the subscription.
    let done = false;
    void answered.then(() => {
      done = true;
    });
    for (let i = 0; !done && i < 100; i++) {
      await write('waited');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const res = await answered;
    expect(res.status).toBe(200);
    expect(res.body.events[0]).toMatchObject({ key: 'waited', type: 'string', op: 'set' });
  });

  test('when it filters by prefix and type, then only those events, and next moves past the others', async () => {
    const { next } = (await changes()).body;
    await write('f:one');
    await as(admin, request(t.data).post('/store/hash/f:two')).send({ fields: { a: '1' } });
    await write('g:three');
    const byPrefix = (await changes({ since: next, prefix: 'f:' })).body;
    expect(byPrefix.events.map((e: { key: string }) => e.key)).toEqual(['f:one', 'f:two']);
    const byType = (await changes({ since: next, type: 'hash' })).body;
    expect(byType.events.map((e: { key: string }) => e.key)).toEqual(['f:two']);
    const none = (await changes({ since: next, prefix: 'nothing:' })).body;
    expect(none.events).toEqual([]);
    expect(none.next).not.toBe(next);
  });

  test.each([
    'yesterday',
    '99999999999999999999-0',
    '1795374145810-99999999999999999999',
    '18446744073709551615-18446744073709551615',
  ])('when since is %s, not an event id Redis can read after, then 400 invalid_request', async (since) => {
    const res = await changes({ since });
    expect([res.status, res.body.error]).toEqual([400, 'invalid_request']);
  });
});

describe('a tenant', () => {
  test('when it follows the feed, then it sees only its own keys, and flushes', async () => {
    const { next } = (await changes()).body;
    await write('tenant-a:mine', 'v', tenant);
    await write('tenant-b:theirs');
    await as(
      admin,
      request(t.data).post('/store/admin/flush').set('Content-Type', 'application/json'),
    ).expect(200);
    const page = (await changes({ since: next }, tenant)).body;
    expect(page.events.map((e: { key: string; op: string }) => [e.key, e.op])).toEqual([
      ['tenant-a:mine', 'set'],
      ['', 'flush'],
    ]);
  });

  test('when it asks for a prefix outside its own, then 403 forbidden', async () => {
    expect((await changes({ prefix: 'tenant-b:' }, tenant)).status).toBe(403);
  });
});

describe('retention', () => {
  test('when the resume point was trimmed away, then 410 changes_reset with where to go on from', async () => {
    const small = await feedApp('feed-reset', 11, { SVC_CHANGES_MAXLEN: '10' });
    try {
      await request(small.data).post('/store/string/first').send({ value: 'v' });
      const { next: old } = (await request(small.data).get('/store/changes')).body;
      const operations = Array.from({ length: 500 }, (_, i) => ({ type: 'set', key: `r${i}`, value: 'v' }));
      await request(small.data).post('/store/string/batch').send({ operations }).expect(200);
      const res = await request(small.data).get('/store/changes').query({ since: old });
      expect(res.status).toBe(410);
      expect(res.body).toMatchObject({ error: 'changes_reset', details: { since: old } });
      const after = await request(small.data).get('/store/changes').query({ since: res.body.details.next });
      expect([after.status, after.body.events]).toEqual([200, []]);
    } finally {
      await small.close();
    }
  });
});

describe('the subscriber cap', () => {
  test('when SVC_CHANGES_MAX_SUBSCRIBERS long-polls wait, then one more is 503, and answering is at once', async () => {
    const capped = await feedApp('feed-cap', 11, { SVC_CHANGES_MAX_SUBSCRIBERS: '1' });
    try {
      const { next } = (await request(capped.data).get('/store/changes')).body;
      const first = request(capped.data)
        .get('/store/changes')
        .query({ since: next, wait: 60 })
        .then((r) => r);
      let second = await request(capped.data).get('/store/changes').query({ since: next, wait: 60 });
      // Until the first one has subscribed, the second one may get in and wait too: release it with a write.
      for (let i = 0; second.status !== 503 && i < 50; i++) {
        second = await request(capped.data)
          .get('/store/changes')
          .query({ since: second.body.next, wait: 60 });
      }
      expect([second.status, second.body.error]).toEqual([503, 'service_unavailable']);
      expect((await request(capped.data).get('/store/changes').query({ since: next })).status).toBe(200);
      await request(capped.data).post('/store/string/release').send({ value: 'v' });
      expect((await first).body.events[0]).toMatchObject({ key: 'release' });
    } finally {
      await capped.close();
    }
  });
});

test('when the feed is off, then /store/changes is 404 unknown_endpoint and info says no websocket', async () => {
  const off = await testApp('feed-off');
  try {
    const res = await request(off.data).get('/store/changes');
    expect([res.status, res.body.error]).toEqual([404, 'unknown_endpoint']);
    // Writes leave no event and no stream behind.
    await request(off.data).post('/store/string/no-feed').send({ value: 'v' }).expect(201);
    expect(await off.raw.exists(streamOf(off))).toBe(0);
    expect((await request(off.data).get('/store/admin/info')).body.features.websocket).toBe(false);
    expect((await as(admin, request(t.data).get('/store/admin/info'))).body.features.websocket).toBe(true);
  } finally {
    await off.close();
  }
});
