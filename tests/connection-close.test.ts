// How the listener ends a connection (issue 28): an answer still written after the client's half-close, and a 413
// that reaches a client still sending its body (no Expect: 100-continue, as fetch does) instead of a reset.
import net from 'node:net';
import { type Listener, listen } from '../src/http/server';
import { type TestApp, testApp } from './support/app';
import { freePort } from './support/redis-server';
import { killServices, startService } from './support/service-process';

let t: TestApp;
let listener: Listener;
let port: number;
beforeAll(async () => {
  t = await testApp('connection-close');
  listener = await listen(t.data, t.context, 0, '127.0.0.1');
  port = (listener.server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await listener.close(0);
  await t.close();
});

interface Exchange {
  text: string;
  error?: string;
}

/** Sends `head` and half-closes; resolves with what came back once the connection is closed. */
function exchange(head: string) {
  return new Promise<Exchange>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let error: string | undefined;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
      // A complete answer (headers and the Content-Length it announces): the client is done, as fetch would be.
      const end = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)/i.exec(text)?.[1];
      if (end > 0 && length !== undefined && text.length >= end + 4 + Number(length)) socket.destroy();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error = err.code;
    });
    socket.on('close', () => resolve({ text, error }));
    socket.end(head); // the request, then a FIN
  });
}
const statusOf = (text: string) => Number(text.slice(9, 12));

describe('a client that half-closes after its request (shutdown(SHUT_WR))', () => {
  test.each([
    ['GET /store/zset/x HTTP/1.1\r\nHost: x\r\n\r\n', 404],
    ['GET /store/admin/ping HTTP/1.1\r\nHost: x\r\n\r\n', 200],
    [
      'POST /store/string/half HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{"value":"v"}',
      201,
    ],
  ])('when it sends %j, then the answer (%i) is still written', async (head, status) => {
    const { text } = await exchange(head);
    expect(statusOf(text)).toBe(status);
  });
});

describe('an upload over the body limit without Expect: 100-continue, to the service as a process', () => {
  // Another process, as in production: in this one, the client and the server share an event loop, and the
  // client always reads the 413 before the server's close could reset it.
  const LIMIT = 10 * 1024 * 1024;
  const body = Buffer.alloc(LIMIT + 1, 'x');
  let base: string;
  beforeAll(async () => {
    const servicePort = await freePort();
    base = `http://127.0.0.1:${servicePort}`;
    startService({
      SVC_PORT: String(servicePort),
      SVC_REDIS_URL: process.env.REDIS_URL as string,
      SVC_KEY_PREFIX: t.prefix,
      SVC_PROTECTED_MODE: 'false',
      SVC_RATE_LIMIT_ENABLED: 'false',
    });
    const deadline = Date.now() + 60_000;
    while (
      Date.now() < deadline &&
      !(await fetch(`${base}/`).then(
        (r) => r.ok,
        () => false,
      ))
    )
      await new Promise((r) => setTimeout(r, 100));
  }, 70_000);
  afterAll(killServices);

  test('when fetch sends 40 uploads of the limit + 1 byte, then every one gets the 413', async () => {
    const seen: (number | string)[] = [];
    for (let i = 0; i < 40; i++) {
      const outcome = await fetch(`${base}/store/string/upload`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      }).then(
        async (res) => {
          await res.arrayBuffer();
          return res.status;
        },
        (err: Error & { cause?: { code?: string } }) => err.cause?.code ?? err.message,
      );
      seen.push(outcome);
    }
    expect(seen).toEqual(Array(40).fill(413));
    expect(await t.raw.exists(`${t.prefix}upload`)).toBe(0);
  }, 120_000);
});
