// Bounded work per request body: nesting depth, UTF-8, sizes refused before or while reading, validators that
// keep nothing of a rejected body.
import http, { type Server } from 'node:http';
import net from 'node:net';
import request from 'supertest';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../src/http/body-limits';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
let server: Server;
let port: number;
beforeAll(async () => {
  t = await testApp('limits', { SVC_MAX_BODY_BYTES: '4096' });
  server = t.data.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});
const api = () => request(t.data);
/** A string in `n` arrays: inside the body object, `n + 1` levels deep. */
const inArrays = (n: number) => `${'['.repeat(n)}"v"${']'.repeat(n)}`;

/** POSTs `body` as JSON with Node's client: chunked when `chunked`, else with its Content-Length. */
function post(path: string, body: Buffer, { chunked = false, type = 'application/json' } = {}) {
  return new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
    const headers = { 'Content-Type': type, ...(chunked ? {} : { 'Content-Length': body.length }) };
    const req = http.request(
      { host: '127.0.0.1', port, path, method: 'POST', headers, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends `head` (and then `body`) on a raw socket; resolves with everything the server sent until it closed. */
function rawExchange(head: string, body = ''): Promise<{ text: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let error: string | undefined;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error = err.code;
    });
    socket.on('close', () => resolve({ text, error }));
    socket.write(head);
    if (body) socket.write(body);
    // Nothing more is sent: a server that waited for the announced body would never answer (the test times out).
  });
}
const statusOf = (text: string) => Number(text.slice(9, 12));
const jsonOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));

describe('JSON nesting', () => {
  test(`when a body nests ${MAX_JSON_DEPTH + 1} levels deep, then 400 invalid_value names the limit and nothing is written`, async () => {
    const res = await api()
      .post('/store/string/deep')
      .set('Content-Type', 'application/json')
      .send(`{"value":${inArrays(MAX_JSON_DEPTH)}}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_value');
    expect(res.body.message).toContain(String(MAX_JSON_DEPTH));
    expect(await t.raw.exists(`${t.prefix}deep`)).toBe(0);
  });

  test(`when it nests exactly ${MAX_JSON_DEPTH} levels, then the depth check lets it through to validation`, async () => {
    const res = await api()
      .post('/store/string/deep')
      .set('Content-Type', 'application/json')
      .send(`{"value":${inArrays(MAX_JSON_DEPTH - 1)}}`);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/value must be string/);
  });

  test('when brackets sit inside strings, then they do not count', async () => {
    const value = `${'[{'.repeat(100)}\\"[`;
    const res = await api()
      .post('/store/string/brackets')
      .set('Content-Type', 'application/json')
      .send(`{"value":"${value}"}`);
    expect(res.status).toBe(201);
    expect(await t.raw.get(`${t.prefix}brackets`)).toBe(`${'[{'.repeat(100)}"[`);
  });
});

describe('the nesting scan (nestsDeeperThan)', () => {
  /** The scan byte by byte, as it was before strings were skipped with indexOf: the reference. */
  function byteByByte(buf: Buffer, limit: number): boolean {
    let depth = 0;
    let inString = false;
    for (let i = 0; i < buf.length; i++) {
      const c = buf[i];
      if (inString) {
        if (c === 0x5c) i++;
        else if (c === 0x22) inString = false;
      } else if (c === 0x22) inString = true;
      else if (c === 0x7b || c === 0x5b) {
        if (++depth > limit) return true;
      } else if (c === 0x7d || c === 0x5d) depth--;
    }
    return false;
  }

  test('when a string ends in escaped backslashes, then the brackets after it count', () => {
    // The JSON string "a\\" (an a, then an escaped backslash) ends at its quote, which the backslash before it does
    // not escape: the object and the three arrays after it nest 4 levels.
    const body = Buffer.from('{"v":"a\\\\","w":[[[1]]]}');
    expect(nestsDeeperThan(body, 4)).toBe(false);
    expect(nestsDeeperThan(body, 3)).toBe(true);
    // An escaped quote does not end the string: the brackets inside it do not count.
    expect(nestsDeeperThan(Buffer.from('{"v":"\\"[[[[\\""}'), 1)).toBe(false);
  });

  test('when given any mix of brackets, quotes and backslashes, then it agrees with the byte-by-byte scan', () => {
    const alphabet = '[]{}"\\a,:';
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let n = 0; n < 20_000; n++) {
      const text = Array.from({ length: 1 + Math.floor(random() * 30) }, () =>
        alphabet.charAt(Math.floor(random() * alphabet.length)),
      ).join('');
      const buf = Buffer.from(text);
      for (const limit of [0, 1, 2, 3])
        expect([text, limit, nestsDeeperThan(buf, limit)]).toEqual([text, limit, byteByByte(buf, limit)]);
    }
  });
});

describe('UTF-8', () => {
  test('when a JSON body holds invalid UTF-8, then 400 invalid_value and nothing is stored', async () => {
    const body = Buffer.concat([Buffer.from('{"value":"a'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    const res = await post('/store/string/utf8', body);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_value');
    expect(res.body.message).toMatch(/UTF-8/);
    expect(await t.raw.exists(`${t.prefix}utf8`)).toBe(0);
  });

  test('when the body declares another charset, then 415 unsupported_media_type', async () => {
    const res = await post('/store/string/utf16', Buffer.from('{"value":"v"}', 'utf16le'), {
      type: 'application/json; charset=utf-16le',
    });
    expect(res.status).toBe(415);
    expect(await t.raw.exists(`${t.prefix}utf16`)).toBe(0);
  });
});

describe('body size', () => {
  test('when Content-Length announces 1 GB and little is sent, then 413 comes at once with Connection: close', async () => {
    const { text } = await rawExchange(
      'POST /store/string/huge HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n',
      '{"value":"',
    );
    expect(statusOf(text)).toBe(413);
    expect(text).toMatch(/\r\nConnection: close\r\n/i);
    expect(jsonOf(text)).toMatchObject({ error: 'payload_too_large', status: 413 });
    expect(await t.raw.exists(`${t.prefix}huge`)).toBe(0);
  });

  test('when a chunked body crosses the limit, then 413 comes without waiting for its end', async () => {
    const chunk = `{"value":"${'x'.repeat(5000)}`;
    const { text } = await rawExchange(
      'POST /store/string/chunked HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      `${chunk.length.toString(16)}\r\n${chunk}\r\n`, // and no last chunk
    );
    expect(statusOf(text)).toBe(413);
    expect(text).toMatch(/\r\nConnection: close\r\n/i);
    expect(jsonOf(text).error).toBe('payload_too_large');
    expect(await t.raw.exists(`${t.prefix}chunked`)).toBe(0);
  });

  test('when a chunked body stays under the limit, then it is stored', async () => {
    const res = await post('/store/string/small-chunked', Buffer.from('{"value":"v"}'), { chunked: true });
    expect(res.status).toBe(201);
  });

  test('when a refused request had a body not yet read, then the connection is closed rather than drained', async () => {
    const { text } = await rawExchange(
      'POST /store/nothing-here HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3000\r\n\r\n',
      '{"value":',
    );
    expect(statusOf(text)).toBe(404);
    expect(text).toMatch(/\r\nConnection: close\r\n/i);
  });

  test('when an error answers a request without a body, then its keep-alive connection stays open', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise<{ status: number; connection?: string; reused: boolean }>((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/store/nothing-here', agent }, (res) => {
          res.resume();
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              connection: res.headers.connection,
              reused: req.reusedSocket,
            }),
          );
        });
        req.on('error', reject);
      });
    try {
      const first = await get();
      const second = await get();
      expect([first.status, first.connection]).toEqual([404, 'keep-alive']);
      expect([second.status, second.reused]).toEqual([404, true]);
    } finally {
      agent.destroy();
    }
  });
});

describe('bounded memory', () => {
  test('when multi-MB bodies are refused by every body route, then no validator keeps any of them', async () => {
    const big = await testApp('limits-big', {});
    try {
      const pad = 'x'.repeat(3 * 1024 * 1024);
      const bodyOps = big.context.contract.operations.filter((o) => o.hasBody && !o.path.includes('admin'));
      expect(bodyOps.length).toBeGreaterThan(5);
      for (const op of bodyOps) {
        const url = op.path.replace('{key}', 'k').replace('{field}', 'f').replace('{member}', 'm');
        // Valid JSON that fails validation (an unknown property), holding 3 MB: AJV's verbose errors quote it.
        const res = await request(big.data)
          [op.method](url)
          .send({ not_a_property: pad, operations: [pad] });
        expect(res.status).toBe(400);
        const deep = await request(big.data)
          [op.method](url)
          .set('Content-Type', 'application/json')
          .send(`{"x":${inArrays(200)},"pad":"${pad}"}`);
        expect(deep.status).toBe(400);
      }
      expect(big.context.contract.retainedErrors()).toBe(0);
    } finally {
      await big.close();
    }
  }, 120_000);
});
