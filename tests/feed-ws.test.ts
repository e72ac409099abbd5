// The change feed over a WebSocket: guarded like any request, live, resumable by since, reset, closed with a reason.
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import WebSocket from 'ws';
import { type Listener, listen } from '../src/http/server';
import type { TestApp } from './support/app';
import { apiKey, bearer } from './support/auth';
import { feedApp, inbox, lastId, streamOf } from './support/feed';

const reader = apiKey('reader', ['read']);
const tenant = apiKey('tenant', ['read', 'write'], 'tenant-a:');
const writer = apiKey('writer', ['read', 'write']);
let t: TestApp;
let listener: Listener;
let base: string;
beforeAll(async () => {
  t = await feedApp('feed-ws', 13, { SVC_API_KEYS: JSON.stringify({ keys: [reader, tenant, writer] }) });
  listener = await listen(t.data, t.context, 0, '127.0.0.1');
  base = `ws://127.0.0.1:${(listener.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await listener.close(1000);
  await t.close();
});

const write = (key: string) =>
  request(t.data).post(`/store/string/${key}`).set('Authorization', bearer(writer)).send({ value: 'v' });

interface Client {
  ws: WebSocket;
  messages: Record<string, unknown>[];
  waitFor(count: number): Promise<Record<string, unknown>[]>;
  closed: Promise<{ code: number; reason: string }>;
}

/** Opens the WebSocket and resolves once it is open; rejects with the HTTP status when the handshake is refused. */
function connect(query = '', who: { key: string } = reader): Promise<Client> {
  const ws = new WebSocket(`${base}/store/changes/ws${query}`, { headers: { Authorization: bearer(who) } });
  const { messages, push, waitFor } = inbox<Record<string, unknown>>();
  ws.on('message', (data) => push(JSON.parse(String(data))));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  return new Promise((resolve, reject) => {
    ws.on('open', () => resolve({ ws, messages, waitFor, closed }));
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () =>
        reject(Object.assign(new Error(body), { status: res.statusCode, body: JSON.parse(body) })),
      );
    });
    ws.on('error', reject);
  });
}

/** Writes `key` until the client got a message: its subscription is live only shortly after the handshake. */
async function writeUntilSeen(client: Client, key: string): Promise<void> {
  for (let i = 0; i < 100 && client.messages.length === 0; i++) {
    await write(key);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('a WebSocket', () => {
  test('when writes come, then each is one change message, in order', async () => {
    const client = await connect();
    try {
      await writeUntilSeen(client, 'w0');
      const before = client.messages.length;
      await write('w1');
      await request(t.data).delete('/store/string/w1').set('Authorization', bearer(writer));
      const got = (await client.waitFor(before + 2)).slice(before);
      expect(got.map((m) => [m.kind, m.key, m.op])).toEqual([
        ['change', 'w1', 'set'],
        ['change', 'w1', 'del'],
      ]);
    } finally {
      client.ws.close();
    }
  });

  test('when it resumes with since, then the backlog first, then live, nothing twice', async () => {
    const since = await lastId(t);
    await write('b1');
    await write('b2');
    const client = await connect(`?since=${since}&prefix=b`);
    try {
      await client.waitFor(2);
      await write('b3');
      await write('c1');
      await write('b4');
      await client.waitFor(4);
      expect(client.messages.map((m) => m.key)).toEqual(['b1', 'b2', 'b3', 'b4']);
    } finally {
      client.ws.close();
    }
  });

  test('when since is beyond the retention, then a reset message with where the feed goes on', async () => {
    const old = await lastId(t);
    await write('gone1');
    await write('gone2');
    await t.raw.xtrim(streamOf(t), 'MAXLEN', 1);
    const client = await connect(`?since=${old}`);
    try {
      const [reset] = await client.waitFor(1);
      expect(reset).toMatchObject({ kind: 'reset', since: old, next: expect.any(String) });
    } finally {
      client.ws.close();
    }
  });

  test('when the service closes the feed, then a close message and code 1001', async () => {
    const other = await feedApp('feed-ws-close', 13, { SVC_API_KEYS: JSON.stringify({ keys: [reader] }) });
    const own = await listen(other.data, other.context, 0, '127.0.0.1');
    const port = (own.server.address() as AddressInfo).port;
    try {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/store/changes/ws`, {
        headers: { Authorization: bearer(reader) },
      });
      const messages: unknown[] = [];
      ws.on('message', (d) => messages.push(JSON.parse(String(d))));
      const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
      await new Promise((resolve) => ws.on('open', resolve));
      for (let i = 0; i < 200 && (other.context.feed?.hub.size ?? 0) === 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 25));
      await other.context.feed?.close();
      expect(await closed).toBe(1001);
      expect(messages).toEqual([{ kind: 'close', reason: 'the service is shutting down' }]);
    } finally {
      await own.close(1000);
      await other.close();
    }
  });
});

describe('a handshake', () => {
  test('when it has no credentials, then 401 unauthorized as JSON, and no socket', async () => {
    await expect(connect('', { key: 'no-such-key-0123456789' })).rejects.toMatchObject({
      status: 401,
      body: { error: 'unauthorized' },
    });
  });

  test('when a tenant asks for a prefix outside its own, then 403 forbidden', async () => {
    await expect(connect('?prefix=tenant-b:', tenant)).rejects.toMatchObject({ status: 403 });
  });

  test('when since is not an event id, then 400 invalid_request', async () => {
    await expect(connect('?since=soon')).rejects.toMatchObject({
      status: 400,
      body: { error: 'invalid_request' },
    });
  });

  test('when a plain GET comes (no Upgrade), then 400 invalid_request', async () => {
    const res = await request(t.data).get('/store/changes/ws').set('Authorization', bearer(reader));
    expect([res.status, res.body.error]).toEqual([400, 'invalid_request']);
  });
});
