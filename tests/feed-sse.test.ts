// The change feed as Server-Sent Events: live, resume by Last-Event-ID without gap or duplicate, reset, slow clients.
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { type Listener, listen } from '../src/http/server';
import type { TestApp } from './support/app';
import { feedApp, lastId, type SseClient, sse, streamOf } from './support/feed';

let t: TestApp;
let listener: Listener;
let base: string;
beforeAll(async () => {
  t = await feedApp('feed-sse', 12, { SVC_CHANGES_HEARTBEAT_MS: '200' });
  listener = await listen(t.data, t.context, 0, '127.0.0.1');
  base = `http://127.0.0.1:${(listener.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await listener.close(1000);
  await t.close();
});

const write = (key: string) => request(t.data).post(`/store/string/${key}`).send({ value: 'v' }).expect(201);
const keys = (client: SseClient) => client.messages.map((m) => (m.data as { key: string }).key);

/** Resolves once the stream is live (its first comment is written after the subscription). */
async function opened(client: SseClient): Promise<SseClient> {
  expect(await client.status).toBe(200);
  for (let i = 0; i < 200 && !client.comments.includes('following changes'); i++)
    await new Promise((resolve) => setTimeout(resolve, 25));
  expect(client.comments).toContain('following changes');
  return client;
}

describe('an event stream', () => {
  test('when writes come, then each is one event whose id is its stream id, in order', async () => {
    const client = await opened(sse(base));
    try {
      await write('s1');
      await request(t.data)
        .post('/store/hash/s2')
        .send({ fields: { a: '1' } });
      await request(t.data).delete('/store/string/s1');
      const got = await client.waitFor(3);
      expect(
        got.map((m) => [m.event, (m.data as { key: string }).key, (m.data as { op: string }).op]),
      ).toEqual([
        ['message', 's1', 'set'],
        ['message', 's2', 'hset'],
        ['message', 's1', 'del'],
      ]);
      for (const m of got) expect(m.id).toBe((m.data as { id: string }).id);
    } finally {
      client.close();
    }
  });

  test('when the client reconnects with Last-Event-ID, then it gets what it missed, then live, nothing twice', async () => {
    const first = await opened(sse(base));
    await write('r1');
    const [seen] = await first.waitFor(1);
    first.close();
    await write('r2');
    await write('r3');
    const again = await opened(sse(base, '', { 'Last-Event-ID': seen?.id as string }));
    try {
      await again.waitFor(2);
      await write('r4');
      await again.waitFor(3);
      expect(keys(again)).toEqual(['r2', 'r3', 'r4']);
    } finally {
      again.close();
    }
  });

  test('when EventSource reconnects to a URL with ?since=, then its Last-Event-ID wins (nothing replayed twice)', async () => {
    const since = await lastId(t);
    await write('e1');
    const first = await opened(sse(base, `?since=${since}`));
    const [seen] = await first.waitFor(1);
    first.close();
    await write('e2');
    const again = await opened(sse(base, `?since=${since}`, { 'Last-Event-ID': seen?.id as string }));
    try {
      await again.waitFor(1);
      expect(keys(again)).toEqual(['e2']);
    } finally {
      again.close();
    }
  });

  test('when ?since= and a prefix filter are given, then the backlog and live events under that prefix only', async () => {
    const { next } = (await request(t.data).get('/store/changes')).body;
    await write('a:1');
    await write('b:1');
    const client = await opened(sse(base, `?since=${next}&prefix=a:`));
    try {
      await write('b:2');
      await write('a:2');
      await client.waitFor(2);
      expect(keys(client)).toEqual(['a:1', 'a:2']);
    } finally {
      client.close();
    }
  });

  test('when streams are open and events delivered, then the metrics count them by transport', async () => {
    const client = await opened(sse(base));
    try {
      await write('metered');
      await client.waitFor(1);
      const text = (await request(t.data).get('/store/admin/metrics')).text;
      expect(text).toMatch(/svc_changes_subscribers\{transport="sse"\} [1-9]/);
      expect(text).toMatch(/svc_changes_events_delivered_total\{transport="sse"\} [1-9]/);
      expect(text).toContain('# TYPE svc_changes_subscribers_dropped_total counter');
    } finally {
      client.close();
    }
  });

  test('when it stays open, then heartbeat comments come', async () => {
    const client = await opened(sse(base));
    try {
      for (let i = 0; i < 400 && !client.comments.includes('heartbeat'); i++)
        await new Promise((resolve) => setTimeout(resolve, 25));
      expect(client.comments).toContain('heartbeat');
    } finally {
      client.close();
    }
  });
});

describe('a resume point beyond the retention', () => {
  test('when the client resumes from it, then a reset event with where the feed goes on, then live', async () => {
    await write('old');
    const old = await lastId(t);
    const operations = Array.from({ length: 300 }, (_, i) => ({ type: 'set', key: `x${i}`, value: 'v' }));
    // A trim of the feed as SVC_CHANGES_MAXLEN=10 would do it.
    await request(t.data).post('/store/string/batch').send({ operations }).expect(200);
    await t.raw.xtrim(streamOf(t), 'MAXLEN', 10);
    const client = await opened(sse(base, '', { 'Last-Event-ID': old }));
    try {
      const [reset] = await client.waitFor(1);
      expect(reset).toMatchObject({ event: 'reset', data: { since: old } });
      expect(reset?.id).toBe((reset?.data as { next: string } | undefined)?.next);
      await write('after-reset');
      const [, live] = await client.waitFor(2);
      expect(live?.data).toMatchObject({ key: 'after-reset' });
    } finally {
      client.close();
    }
  });
});

describe('a slow client', () => {
  test('when it falls more than SVC_CHANGES_BUFFER events behind, then it alone is dropped with a reason', async () => {
    const small = await feedApp('feed-slow', 12, { SVC_CHANGES_BUFFER: '5000' });
    const own = await listen(small.data, small.context, 0, '127.0.0.1');
    const url = `http://127.0.0.1:${(own.server.address() as AddressInfo).port}`;
    const good = await opened(sse(url));
    const slow = sse(url, '', {}, { paused: true });
    try {
      expect(await slow.status).toBe(200);
      // Both subscribed before the writes start.
      for (let i = 0; i < 200; i++) {
        const text = (await request(small.data).get('/store/admin/metrics')).text;
        if (/svc_changes_subscribers\{transport="sse"\} 2/.test(text)) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const dropped = () =>
        request(small.data)
          .get('/store/admin/metrics')
          .then((r) => /svc_changes_subscribers_dropped_total\{transport="sse"\} [1-9]/.test(r.text));
      let sent = 0;
      // Bounded: enough to fill the slow client's socket buffers many times over.
      for (let i = 0; i < 400 && !(await dropped()); i++) {
        const operations = Array.from({ length: 500 }, (_, j) => ({
          type: 'set',
          key: `k${j}`,
          value: 'v',
        }));
        await request(small.data).post('/store/string/batch').send({ operations }).expect(200);
        sent += 500;
      }
      expect(await dropped()).toBe(true);
      await good.waitFor(sent, 60_000);
      slow.resume();
      await slow.ended;
      const last = slow.messages[slow.messages.length - 1];
      expect(last).toMatchObject({
        event: 'close',
        data: { reason: expect.stringContaining('slower than events came') },
      });
    } finally {
      good.close();
      slow.close();
      await own.close(1000);
      await small.close();
    }
  }, 120_000);
});
