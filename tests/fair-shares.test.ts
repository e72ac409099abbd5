// Fair shares: one credential cannot hold every waiting pop or feed subscriber; streams end with their credential.
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SignJWT } from 'jose';
import request from 'supertest';
import WebSocket from 'ws';
import { type Listener, listen } from '../src/http/server';
import type { WaiterPool } from '../src/redis/waiters';
import { type TestApp, testApp } from './support/app';
import { apiKey, bearer } from './support/auth';
import { feedApp } from './support/feed';

const a = apiKey('a', ['read', 'write'], 'a:');
const b = apiKey('b', ['read', 'write'], 'b:');
const KEYS = JSON.stringify({ keys: [a, b] });

/** Polls until `check` holds; fails after `ms` (generous: the machine is shared), never races real time. */
async function until(check: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
const started = (req: request.Test) =>
  new Promise<request.Response>((resolve, reject) => req.then(resolve, reject));

describe('waiting list pops', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp('fair-pops', {
      SVC_API_KEYS: KEYS,
      SVC_LIST_MAX_WAITERS: '4',
      SVC_LIST_MAX_WAITERS_PER_CLIENT: '2',
    });
  });
  afterAll(() => t.close());
  const pop = (who: { key: string }, key: string) =>
    request(t.data).post(`/store/list/${key}/pop`).set('Authorization', bearer(who)).send({ wait: 20 });
  const push = (key: string) =>
    request(t.data)
      .post(`/store/list/${key}/push`)
      .set('Authorization', bearer(key.startsWith('a:') ? a : b))
      .send({ values: ['x'] });

  test('when one credential holds its share, then its next wait is 429 naming the setting and another still waits', async () => {
    const waiters = t.context.store.waiters as WaiterPool;
    const held = [started(pop(a, 'a:q1')), started(pop(a, 'a:q2'))];
    await until(() => waiters.waiting === 2);
    const third = await pop(a, 'a:q3');
    expect([third.status, third.body.error]).toEqual([429, 'rate_limit_exceeded']);
    expect(third.body.message).toContain('SVC_LIST_MAX_WAITERS_PER_CLIENT');
    expect(third.headers['retry-after']).toBeDefined();
    const other = started(pop(b, 'b:q1'));
    await until(() => waiters.waiting === 3);
    for (const key of ['a:q1', 'a:q2', 'b:q1']) await push(key);
    for (const res of [...held, other]) expect((await res).status).toBe(200);
    await until(() => waiters.waiting === 0);
  });
});

describe('change feed subscribers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await feedApp('fair-feed', 15, {
      SVC_API_KEYS: KEYS,
      SVC_CHANGES_MAX_SUBSCRIBERS: '4',
      SVC_CHANGES_MAX_SUBSCRIBERS_PER_CLIENT: '2',
    });
  });
  afterAll(() => t.close());
  const poll = (who: { key: string }, since: string) =>
    request(t.data).get('/store/changes').set('Authorization', bearer(who)).query({ since, wait: 30 });

  test('when one credential holds its share, then its next is 429 and another credential still follows', async () => {
    const { next } = (await request(t.data).get('/store/changes').set('Authorization', bearer(a))).body;
    const held = [started(poll(a, next)), started(poll(a, next))];
    await until(() => t.context.feed?.hub.size === 2);
    const third = await poll(a, next);
    expect([third.status, third.body.error]).toEqual([429, 'rate_limit_exceeded']);
    expect(third.body.message).toContain('SVC_CHANGES_MAX_SUBSCRIBERS_PER_CLIENT');
    const other = started(poll(b, next));
    await until(() => t.context.feed?.hub.size === 3);
    await request(t.data).post('/store/string/a:go').set('Authorization', bearer(a)).send({ value: 'v' });
    await request(t.data).post('/store/string/b:go').set('Authorization', bearer(b)).send({ value: 'v' });
    for (const res of held) expect((await res).body.events[0]).toMatchObject({ key: 'a:go' });
    expect((await other).body.events[0]).toMatchObject({ key: 'b:go' });
  });
});

describe('open streams', () => {
  const SECRET = 'a-jwt-secret-of-at-least-32-characters!';
  let t: TestApp;
  let listener: Listener;
  let base: string;
  const file = path.join(os.tmpdir(), `fair-keys-${process.pid}.json`);
  beforeAll(async () => {
    writeFileSync(file, KEYS);
    t = await feedApp('fair-close', 15, { SVC_API_KEYS_FILE: file, SVC_JWT_SECRET: SECRET });
    listener = await listen(t.data, t.context, 0, '127.0.0.1');
    base = `ws://127.0.0.1:${(listener.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await listener.close(1000);
    await t.close();
  });

  function follow(
    authorization: string,
  ): Promise<{ ws: WebSocket; closed: Promise<{ code: number; reason: string }> }> {
    const ws = new WebSocket(`${base}/store/changes/ws`, { headers: { Authorization: authorization } });
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
    );
    return new Promise((resolve, reject) => {
      ws.on('open', () => resolve({ ws, closed }));
      ws.on('error', reject);
    });
  }

  test('when a reload removes their API key, then they are closed with a reason; others stay', async () => {
    const gone = await follow(bearer(a));
    const stays = await follow(bearer(b));
    writeFileSync(file, JSON.stringify({ keys: [b] }));
    const res = await request(t.data).post('/store/admin/reload').set('Authorization', bearer(b));
    // b lacks admin: the reload goes through the context instead.
    expect(res.status).toBe(403);
    const message = await t.context.reload();
    expect(message).toContain('1 change feed stream of removed credentials closed');
    const { code, reason } = await gone.closed;
    expect(code).toBe(1008);
    expect(reason).toContain('credential');
    // The client has the close frame before the server's side of the socket has closed and left the hub.
    await until(() => t.context.feed?.hub.size === 1);
    stays.ws.close();
    await stays.closed;
  });

  test('when a JWT’s exp passes, then its stream is closed with the reason', async () => {
    const exp = Math.floor(Date.now() / 1000) + 2;
    const jwt = await new SignJWT({ permissions: ['read'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('short')
      .setExpirationTime(exp)
      .sign(new TextEncoder().encode(SECRET));
    const stream = await follow(`Bearer ${jwt}`);
    const { code, reason } = await stream.closed;
    expect(code).toBe(1008);
    expect(reason).toContain('JWT expired');
  });
});
