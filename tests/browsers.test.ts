// Web pages: the Origin allowlist and CORS preflights, Sec-Fetch-Site, form content types, DNS rebinding in protected mode.
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import WebSocket from 'ws';
import { isLoopbackHost } from '../src/http/browsers';
import { type Listener, listen } from '../src/http/server';
import { type TestApp, testApp } from './support/app';
import { apiKey, bearer } from './support/auth';
import { feedApp } from './support/feed';

const ALLOWED = 'https://app.example';
const EVIL = 'https://evil.example';

let open: TestApp;
beforeAll(async () => {
  open = await testApp('browsers', { SVC_CORS_ORIGINS: `${ALLOWED},http://localhost:3000` });
});
afterAll(() => open.close());

describe('an Origin header', () => {
  test('when it is not allowed, then 403 forbidden naming SVC_CORS_ORIGINS, and nothing is written', async () => {
    const res = await request(open.data)
      .post('/store/string/cors-evil')
      .set('Origin', EVIL)
      .send({ value: 'v' });
    expect([res.status, res.body.error]).toEqual([403, 'forbidden']);
    expect(res.body.message).toContain('SVC_CORS_ORIGINS');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(await open.raw.exists(`${open.prefix}cors-evil`)).toBe(0);
  });

  test('when it is the literal null of a sandboxed page, then 403', async () => {
    const res = await request(open.data).get('/store/string/x').set('Origin', 'null');
    expect(res.status).toBe(403);
  });

  test('when it is the service’s own origin (same-origin), then it is served', async () => {
    const res = await request(open.data)
      .get('/store/string/cors-same')
      .set('Host', 'gateway.internal:8080')
      .set('Origin', 'http://gateway.internal:8080');
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
  });

  test('when it is allowed, then the answer carries the CORS headers and exposes ETag, RateLimit-*, the request id', async () => {
    await request(open.data).post('/store/string/cors-ok').send({ value: 'v' }).expect(201);
    const res = await request(open.data).get('/store/string/cors-ok').set('Origin', ALLOWED);
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers.vary).toContain('Origin');
    const exposed = res.headers['access-control-expose-headers'];
    for (const name of [
      'ETag',
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'Retry-After',
      'X-Request-ID',
    ])
      expect(exposed).toContain(name);
  });

  test('when no Origin is sent (curl, a server), then nothing changes', async () => {
    const res = await request(open.data).get('/store/string/cors-none');
    expect(res.status).toBe(404);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('a preflight', () => {
  test('when an allowed origin asks, then 204 with the methods and headers the contract gives the path', async () => {
    const res = await request(open.data)
      .options('/store/string/k')
      .set('Origin', ALLOWED)
      .set('Access-Control-Request-Method', 'DELETE')
      .set('Access-Control-Request-Headers', 'authorization, if-match');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
    const methods = (res.headers['access-control-allow-methods'] ?? '').split(', ');
    // PUT: the raw bytes write (application/octet-stream); PATCH is served nowhere.
    expect(methods).toEqual(expect.arrayContaining(['GET', 'POST', 'PUT', 'DELETE', 'HEAD']));
    expect(methods).not.toContain('PATCH');
    const headers = (res.headers['access-control-allow-headers'] ?? '').toLowerCase();
    const names = [
      'authorization',
      'content-type',
      'if-match',
      'if-none-match',
      'x-request-id',
      'idempotency-key',
    ];
    for (const name of names) expect(headers).toContain(name);
    expect(Number(res.headers['access-control-max-age'])).toBeGreaterThan(0);
  });

  test('when an unlisted origin asks, then 403 JSON', async () => {
    const res = await request(open.data)
      .options('/store/admin/flush')
      .set('Origin', EVIL)
      .set('Access-Control-Request-Method', 'POST');
    expect([res.status, res.body.error]).toEqual([403, 'forbidden']);
  });

  test('when an OPTIONS is not a preflight, then 405 with Allow as before', async () => {
    const res = await request(open.data).options('/store/string/k');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toContain('GET');
  });
});

describe('a wildcard allowlist', () => {
  test('when SVC_CORS_ORIGINS is *, then any origin gets *, never with credentials', async () => {
    const any = await testApp('browsers-any', { SVC_CORS_ORIGINS: '*' });
    try {
      const res = await request(any.data).get('/store/string/x').set('Origin', EVIL);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect((await request(any.data).get('/store/admin/info')).body.features.cors).toBe(true);
    } finally {
      await any.close();
    }
  });

  test('when SVC_CORS_ORIGINS holds a path or a bad scheme, then the start is refused', async () => {
    await expect(testApp('browsers-bad', { SVC_CORS_ORIGINS: 'https://a.example/app' })).rejects.toThrow(
      /SVC_CORS_ORIGINS/,
    );
  });
});

describe('a form content type', () => {
  test.each([
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'text/plain;charset=UTF-8',
  ])(
    'when a bodiless POST says %s (what a form sends), then 415 and the set keeps its member',
    async (type) => {
      await request(open.data)
        .post('/store/set/form-pop')
        .send({ members: ['a'] });
      const form = await request(open.data)
        .post('/store/set/form-pop/pop')
        .set('Content-Type', type)
        .send('x=1');
      expect([form.status, form.body.error]).toEqual([415, 'unsupported_media_type']);
      const empty = await request(open.data).post('/store/admin/flush').set('Content-Type', type);
      expect(empty.status).toBe(415);
      expect(await open.raw.scard(`${open.prefix}form-pop`)).toBe(1);
    },
  );

  test('when a JSON body is sent as text/plain, then 415 and nothing is written', async () => {
    const res = await request(open.data)
      .post('/store/string/form-text')
      .set('Content-Type', 'text/plain')
      .send('{"value":"v"}');
    expect(res.status).toBe(415);
    expect(await open.raw.exists(`${open.prefix}form-text`)).toBe(0);
  });

  test('when a write through /upstash says text/plain, then 415 without a Bearer token, served with one', async () => {
    const form = await request(open.data)
      .post('/upstash/set/form-up')
      .set('Content-Type', 'text/plain')
      .send('v');
    expect(form.status).toBe(415);
    expect(await open.raw.exists(`${open.prefix}form-up`)).toBe(0);
    const writer = apiKey('writer', ['read', 'write']);
    const keyed = await testApp('browsers-keyed', { SVC_API_KEYS: JSON.stringify({ keys: [writer] }) });
    try {
      const res = await request(keyed.data)
        .post('/upstash/set/form-up')
        .set('Authorization', bearer(writer))
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send('v');
      expect([res.status, res.body]).toEqual([200, { result: 'OK' }]);
    } finally {
      await keyed.close();
    }
  });
});

describe('a bodiless POST from a plain client', () => {
  test('when it has no Content-Type and no credentials (curl -X POST), then it runs', async () => {
    await request(open.data)
      .post('/store/set/bare-pop')
      .send({ members: ['a'] })
      .expect(201);
    const res = await request(open.data).post('/store/set/bare-pop/pop');
    expect([res.status, res.body.member]).toEqual([200, 'a']);
  });
});

describe('Sec-Fetch-Site', () => {
  test.each(['cross-site', 'same-site'])(
    'when it is %s and no Origin is sent (an <img>, a link), then 403 and nothing runs',
    async (site) => {
      await request(open.data).post('/store/string/sfs').send({ value: 'v' });
      const res = await request(open.data).get('/upstash/del/sfs').set('Sec-Fetch-Site', site);
      expect([res.status, res.body.error]).toEqual([403, expect.stringContaining('Sec-Fetch-Site')]);
      expect(await open.raw.exists(`${open.prefix}sfs`)).toBe(1);
    },
  );

  test.each(['same-origin', 'none'])('when it is %s, then the request is served', async (site) => {
    const res = await request(open.data).get('/store/string/sfs-none').set('Sec-Fetch-Site', site);
    expect(res.status).toBe(404);
  });

  test('when a link on another site is followed (a navigating GET), then the page is served', async () => {
    for (const path of ['/docs/', '/store/string/sfs-none']) {
      const res = await request(open.data)
        .get(path)
        .set('Sec-Fetch-Site', 'cross-site')
        .set('Sec-Fetch-Mode', 'navigate');
      expect(res.status).not.toBe(403);
    }
  });

  test('when a link on another site leads to the /upstash path form, then 403 and nothing runs', async () => {
    await request(open.data).post('/store/string/sfs-nav').send({ value: 'v' });
    const res = await request(open.data)
      .get('/upstash/del/sfs-nav')
      .set('Sec-Fetch-Site', 'cross-site')
      .set('Sec-Fetch-Mode', 'navigate');
    expect(res.status).toBe(403);
    expect(await open.raw.exists(`${open.prefix}sfs-nav`)).toBe(1);
  });

  test('when an allowed Origin comes with cross-site, then the request is served', async () => {
    const res = await request(open.data)
      .get('/store/string/sfs-none')
      .set('Sec-Fetch-Site', 'cross-site')
      .set('Origin', ALLOWED);
    expect(res.status).toBe(404);
  });
});

describe('protected mode (no credentials, loopback only)', () => {
  let guarded: TestApp;
  beforeAll(async () => {
    guarded = await testApp('browsers-protected', { SVC_PROTECTED_MODE: 'true' });
  });
  afterAll(() => guarded.close());

  test.each(['localhost:8080', 'api.localhost', '127.0.0.1:8080', '127.5.6.7', '[::1]:8080', 'LOCALHOST'])(
    'when Host is %s, then it is served',
    async (host) => {
      const res = await request(guarded.data).get('/store/string/none').set('Host', host);
      expect(res.status).toBe(404);
    },
  );

  test.each([
    'evil.example',
    'evil.example:8080',
    '127.0.0.1.evil.example',
    'localhost.evil.example',
    '10.0.0.1',
  ])('when Host is %s (DNS rebinding), then 403 forbidden', async (host) => {
    const res = await request(guarded.data).get('/store/string/none').set('Host', host);
    expect([res.status, res.body.error]).toEqual([403, 'forbidden']);
    expect(res.body.message).toContain('DNS rebinding');
  });

  test('when a page on another origin posts the admin flush, then 403 and nothing is flushed', async () => {
    await request(guarded.data).post('/store/string/keep').send({ value: 'v' }).expect(201);
    const res = await request(guarded.data)
      .post('/store/admin/flush')
      .set('Origin', 'http://evil.example')
      .set('Content-Type', 'text/plain')
      .send('x');
    expect(res.status).toBe(403);
    expect(await guarded.raw.exists(`${guarded.prefix}keep`)).toBe(1);
  });

  test('isLoopbackHost reads names, IPv4 loopback and [::1] only', () => {
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('a.b.localhost:1')).toBe(true);
    expect(isLoopbackHost('[::1]')).toBe(true);
    expect(isLoopbackHost('[::2]')).toBe(false);
    expect(isLoopbackHost('localhostx')).toBe(false);
    expect(isLoopbackHost('128.0.0.1')).toBe(false);
  });
});

describe('the change feed WebSocket', () => {
  let feed: TestApp;
  let listener: Listener;
  let port: number;
  beforeAll(async () => {
    feed = await feedApp('browsers-ws', 14, { SVC_PROTECTED_MODE: 'true' });
    listener = await listen(feed.data, feed.context, 0, '127.0.0.1');
    port = (listener.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await listener.close(1000);
    await feed.close();
  });

  const handshake = (headers: Record<string, string>) =>
    new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/store/changes/ws`, { headers });
      ws.on('open', () => {
        ws.close();
        resolve(101);
      });
      ws.on('unexpected-response', (_req: http.ClientRequest, res: http.IncomingMessage) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      ws.on('error', reject);
    });

  test('when a page of another origin opens it, then the upgrade is refused with 403', async () => {
    expect(await handshake({ Origin: 'http://evil.example' })).toBe(403);
  });

  test('when the Host is not a loopback name (DNS rebinding), then 403', async () => {
    expect(await handshake({ Host: `rebind.example:${port}` })).toBe(403);
  });

  test('when a same-origin page or a non-browser client opens it, then it is accepted', async () => {
    expect(await handshake({ Origin: `http://127.0.0.1:${port}` })).toBe(101);
    expect(await handshake({})).toBe(101);
  });
});
