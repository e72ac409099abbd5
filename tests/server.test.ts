// The listener (src/http/server.ts): the per-address connection cap, the headers timeout, and parser errors
// answered, counted and logged in the error model.
import net from 'node:net';
import request from 'supertest';
import { loadConfig } from '../src/config';
import { type Listener, listen } from '../src/http/server';
import { type TestApp, testApp } from './support/app';
import { scrape, value } from './support/prometheus';

const PER_IP = 3;
let t: TestApp;
let listener: Listener;
let port: number;
const sockets: net.Socket[] = [];
beforeAll(async () => {
  t = await testApp('server', {
    SVC_MAX_CONNECTIONS_PER_IP: String(PER_IP),
    SVC_HEADERS_TIMEOUT_MS: '500',
    SVC_REQUEST_TIMEOUT_MS: '1000',
  });
  listener = await listen(t.data, t.context, 0, '127.0.0.1');
  port = (listener.server.address() as net.AddressInfo).port;
});
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  // The next test starts once the server has counted every close (the per-address cap would refuse it).
  const deadline = Date.now() + 20_000;
  const open = () => new Promise<number>((r) => listener.server.getConnections((_e, n) => r(n)));
  while ((await open()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
});
afterAll(async () => {
  await listener.close(0);
  await t.close();
});

/** A raw connection that collects what the server sends and notes when it closes. */
function connect() {
  const socket = net.connect(port, '127.0.0.1');
  sockets.push(socket);
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (c: string) => {
    text += c;
  });
  socket.on('error', () => {}); // a refused connection may see ECONNRESET: 'close' below is what counts
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, closed, text: () => text };
}

/** Sends one keep-alive GET and waits for its complete answer (a 404 with a small JSON body). */
async function roundTrip(c: ReturnType<typeof connect>): Promise<number> {
  const before = c.text().length;
  c.socket.write('GET /store/string/server-missing HTTP/1.1\r\nHost: x\r\n\r\n');
  const deadline = Date.now() + 20_000;
  while (!/\r\n\r\n\{[\s\S]*\}$/.test(c.text().slice(before)) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 10));
  return Number(c.text().slice(before + 9, before + 12));
}
const bodyOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));

describe('connections per client address', () => {
  test(`when one address opens ${PER_IP + 1} connections, then the last is closed at once and the others are still served`, async () => {
    const open = Array.from({ length: PER_IP }, connect);
    // Each one answered: each is counted by the server before the next test step.
    for (const c of open) expect(await roundTrip(c)).toBe(404);
    const extra = connect();
    await extra.closed;
    expect(extra.text()).toBe('');
    for (const c of open) expect(await roundTrip(c)).toBe(404);
    // Once one of them is gone, the address may open another.
    open[0]?.socket.destroy();
    await open[0]?.closed;
    const again = connect();
    // The server counts the close asynchronously: give it a few tries, each bounded.
    const deadline = Date.now() + 20_000;
    let status = 0;
    while (status !== 404 && Date.now() < deadline) {
      const c = status === 0 ? again : connect();
      status = await Promise.race([roundTrip(c), c.closed.then(() => 0)]);
    }
    expect(status).toBe(404);
  });
});

describe('slow and malformed requests', () => {
  test('when the headers do not arrive within SVC_HEADERS_TIMEOUT_MS, then 408 request_timeout and the socket is closed', async () => {
    const c = connect();
    c.socket.write('GET /store/string/slow HTTP/1.1\r\nHost: x\r\n'); // and never the blank line
    await c.closed;
    expect(c.text()).toMatch(/^HTTP\/1\.1 408 /);
    expect(bodyOf(c.text())).toMatchObject({ error: 'request_timeout', status: 408 });
  });

  test('when the body stalls past SVC_REQUEST_TIMEOUT_MS, then 408 request_timeout, nothing is written, and the socket is closed', async () => {
    const c = connect();
    c.socket.write(
      'POST /store/string/stalled HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"value":',
    );
    await c.closed;
    expect(c.text()).toMatch(/^HTTP\/1\.1 408 /);
    expect(bodyOf(c.text())).toMatchObject({ error: 'request_timeout', status: 408 });
    expect(await t.raw.exists(`${t.prefix}stalled`)).toBe(0);
  });

  test('when the headers exceed 16 KiB, then 431 headers_too_large with the JSON error body, counted in metrics', async () => {
    const c = connect();
    c.socket.write(`GET /store/string/k HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    await c.closed;
    expect(c.text()).toMatch(/^HTTP\/1\.1 431 /);
    expect(c.text()).toMatch(/\r\nConnection: close\r\n/);
    const body = bodyOf(c.text());
    expect(body).toEqual({
      error: 'headers_too_large',
      message: expect.stringContaining('bytes'),
      status: 431,
      timestamp: expect.any(String),
      request_id: expect.any(String),
    });
    expect(c.text()).toContain(`X-Request-ID: ${body.request_id}`);
    const metrics = await scrape(t.data);
    expect(value(metrics, 'svc_errors_total', { type: 'headers_too_large' })).toBeGreaterThanOrEqual(1);
  });

  test('when a HEAD’s headers exceed 16 KiB, then 431 with the body’s Content-Length and no body', async () => {
    const c = connect();
    c.socket.write(`HEAD /store/string/k HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    await c.closed;
    expect(c.text()).toMatch(/^HTTP\/1\.1 431 /);
    expect(Number(/\r\nContent-Length: (\d+)\r\n/.exec(c.text())?.[1])).toBeGreaterThan(0);
    expect(c.text().endsWith('\r\n\r\n')).toBe(true);
  });

  test('when the URL alone is longer than 16 KiB, then it is refused the same way (Node gives no 414)', async () => {
    const c = connect();
    c.socket.write(`GET /store/string/${'k'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    await c.closed;
    expect(bodyOf(c.text()).error).toBe('headers_too_large');
  });

  test('when the request line is not HTTP, then 400 invalid_request with the JSON error body', async () => {
    const c = connect();
    c.socket.write('HELLO THERE\r\n\r\n');
    await c.closed;
    expect(c.text()).toMatch(/^HTTP\/1\.1 400 /);
    expect(bodyOf(c.text())).toMatchObject({ error: 'invalid_request', status: 400 });
    const stats = await request(t.data).get('/store/admin/stats');
    expect(stats.body.errors.by_type.invalid_request).toBeGreaterThanOrEqual(1);
  });
});

describe('requests and responses', () => {
  test("when a request arrives, then it and its response already have the app's prototypes (Express changes none)", async () => {
    const seen: boolean[] = [];
    const record = (req: object, res: object) =>
      seen.push(
        Object.getPrototypeOf(req) === t.data.request,
        Object.getPrototypeOf(res) === t.data.response,
      );
    listener.server.prependListener('request', record);
    try {
      const c = connect();
      expect(await roundTrip(c)).toBe(404);
    } finally {
      listener.server.off('request', record);
    }
    expect(seen).toEqual([true, true]);
  });
});

describe('timeout settings', () => {
  test('when the listener is created, then it carries the configured timeouts and info lists them', async () => {
    expect(listener.server.headersTimeout).toBe(500);
    expect(listener.server.requestTimeout).toBe(1_000);
    expect(listener.server.keepAliveTimeout).toBe(65_000);
    const info = await request(t.data).get('/store/admin/info');
    expect(info.body.config).toMatchObject({
      max_connections_per_ip: PER_IP,
      headers_timeout_ms: 500,
      request_timeout_ms: 1_000,
      keep_alive_timeout_ms: 65_000,
    });
  });

  test('when SVC_HEADERS_TIMEOUT_MS exceeds SVC_REQUEST_TIMEOUT_MS, then the configuration is refused naming both', () => {
    expect(() => loadConfig({ SVC_HEADERS_TIMEOUT_MS: '5000', SVC_REQUEST_TIMEOUT_MS: '1000' })).toThrow(
      /SVC_HEADERS_TIMEOUT_MS must not exceed SVC_REQUEST_TIMEOUT_MS/,
    );
    expect(loadConfig({ SVC_HEADERS_TIMEOUT_MS: '5000', SVC_REQUEST_TIMEOUT_MS: '0' }).requestTimeoutMs).toBe(
      0,
    );
  });
});
