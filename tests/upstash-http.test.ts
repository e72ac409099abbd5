// The Upstash endpoint over raw HTTP: error shapes, path form, base64, refusals, and where keys are found.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { plan } from '../src/upstash/plan';
import { CommandTable } from '../src/upstash/table';
import { type TestApp, testApp } from './support/app';
import { apiKey, bearer } from './support/auth';

const writer = apiKey('uh-writer', ['read', 'write']);
const tenant = apiKey('uh-tenant', ['read', 'write'], 't1:');
const admin = apiKey('uh-admin', ['read', 'write', 'admin']);

let t: TestApp;
let table: CommandTable;
beforeAll(async () => {
  t = await testApp('upstash-http', { SVC_API_KEYS: JSON.stringify({ keys: [writer, tenant, admin] }) });
  table = await CommandTable.load(t.redis);
});
afterAll(() => t.close());

const post = (path: string, body: unknown, who = writer) =>
  request(t.data)
    .post(path)
    .set('Authorization', bearer(who))
    .send(body as object);

describe('errors come in the shape the SDK reads', () => {
  test('when the token is missing or wrong, then 401 {error}', async () => {
    const res = await request(t.data).post('/upstash').send(['GET', 'k']);
    expect(res.status).toBe(401);
    expect(Object.keys(res.body)).toEqual(['error']);
    const bad = await request(t.data).post('/upstash').set('Authorization', 'Bearer nope').send(['GET', 'k']);
    expect([bad.status, typeof bad.body.error]).toEqual([401, 'string']);
  });

  test("when Redis refuses the command, then 400 with Redis's own text", async () => {
    const res = await post('/upstash', ['GET']);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "ERR wrong number of arguments for 'get' command" });
    expect(res.headers['upstash-sync-token']).toBeDefined();
  });

  test('when the body is not a command, then 400 and nothing runs', async () => {
    for (const body of [{}, [], [null], [['GET', 'k']]]) {
      const res = await post('/upstash', body);
      expect([res.status, typeof res.body.error]).toEqual([400, 'string']);
    }
    const malformed = await request(t.data)
      .post('/upstash')
      .set('Authorization', bearer(writer))
      .set('Content-Type', 'application/json')
      .send('["GET"');
    expect(malformed.status).toBe(400);
  });

  test('when a command is server-wide or dangerous, then 403 whatever the permission', async () => {
    for (const command of [
      ['CONFIG', 'GET', '*'],
      ['DEBUG', 'SLEEP', '0'],
      ['SHUTDOWN'],
      ['MONITOR'],
      ['CLIENT', 'KILL', 'ID', '1'],
      ['ACL', 'LIST'],
      ['SELECT', '1'],
      ['MULTI'],
      ['SUBSCRIBE', 'x'],
      ['SORT', 'l', 'BY', 'weight_*'],
    ]) {
      const res = await post('/upstash', command);
      expect([command[0], res.status]).toEqual([command[0], 403]);
    }
  });

  test('when a transaction holds a command Redis refuses while queueing, then 400 EXECABORT and nothing applies', async () => {
    const res = await post('/upstash/multi-exec', [
      ['SET', 'tx-x', '1'],
      ['GET', 'a', 'b'],
    ]);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^EXECABORT/);
    expect(await t.raw.exists(`${t.prefix}tx-x`)).toBe(0);
  });
});

describe('the path form and encodings', () => {
  test('GET /upstash/<command>/<args> and POST with the body as the last argument', async () => {
    const set = await request(t.data)
      .post('/upstash/set/pf')
      .set('Authorization', bearer(writer))
      .set('Content-Type', 'text/plain')
      .send('a value/with slash');
    expect(set.body).toEqual({ result: 'OK' });
    const get = await request(t.data).get('/upstash/get/pf').set('Authorization', bearer(writer));
    expect(get.body).toEqual({ result: 'a value/with slash' });
    const encoded = await request(t.data)
      .get(`/upstash/get/${encodeURIComponent('pf')}`)
      .set('Authorization', bearer(writer))
      .set('Upstash-Encoding', 'base64');
    expect(Buffer.from(encoded.body.result, 'base64').toString()).toBe('a value/with slash');
  });

  test('base64 encodes every string but OK, recursively; numbers and null stay', async () => {
    await post('/upstash', ['HSET', 'b64', 'f', 'v']);
    const res = await post('/upstash/pipeline', [
      ['SET', 'b64s', 'OK'],
      ['HGETALL', 'b64'],
      ['HLEN', 'b64'],
      ['GET', 'none'],
    ]).set('Upstash-Encoding', 'base64');
    expect(res.body).toEqual([
      { result: 'OK' },
      { result: ['Zg==', 'dg=='] },
      { result: 1 },
      { result: null },
    ]);
  });

  test('numbers and booleans are sent as strings', async () => {
    expect((await post('/upstash', ['SET', 'nb', 12.5])).body).toEqual({ result: 'OK' });
    expect((await post('/upstash', ['GET', 'nb'])).body).toEqual({ result: '12.5' });
    await post('/upstash', ['SET', 'bool', true]);
    expect(await t.raw.get(`${t.prefix}bool`)).toBe('true');
  });
});

describe('keys are found from the command table and put under the prefix', () => {
  const keysOf = (args: string[], prefix = 'P:') => plan(table, args, prefix).args;

  test('fixed, keyword and counted key positions', () => {
    expect(keysOf(['MSET', 'a', '1', 'b', '2'])).toEqual(['MSET', 'P:a', '1', 'P:b', '2']);
    expect(keysOf(['ZUNIONSTORE', 'd', '2', 'x', 'y', 'WEIGHTS', '1', '2'])).toEqual([
      'ZUNIONSTORE',
      'P:d',
      '2',
      'P:x',
      'P:y',
      'WEIGHTS',
      '1',
      '2',
    ]);
    expect(keysOf(['XREAD', 'COUNT', '2', 'STREAMS', 's1', 's2', '0', '0'])).toEqual([
      'XREAD',
      'COUNT',
      '2',
      'STREAMS',
      'P:s1',
      'P:s2',
      '0',
      '0',
    ]);
    // Redis 8 marks XREAD's key spec incomplete: its options are walked as Redis does (a group named STREAMS).
    expect(keysOf(['XREADGROUP', 'GROUP', 'STREAMS', 'c', 'COUNT', '1', 'STREAMS', 'streams', '>'])).toEqual([
      'XREADGROUP',
      'GROUP',
      'STREAMS',
      'c',
      'COUNT',
      '1',
      'STREAMS',
      'P:streams',
      '>',
    ]);
    expect(() => keysOf(['XREAD', 'NEWOPTION', 'STREAMS', 's', '0'])).toThrow(/cannot be located/);
    expect(keysOf(['LMPOP', '2', 'l1', 'l2', 'LEFT'])).toEqual(['LMPOP', '2', 'P:l1', 'P:l2', 'LEFT']);
    expect(keysOf(['EVAL', 'return 1', '1', 'k', 'arg'], '')).toEqual(['EVAL', 'return 1', '1', 'k', 'arg']);
    expect(keysOf(['SCAN', '0', 'MATCH', 'u*'])).toEqual(['SCAN', '0', 'MATCH', 'P:u*']);
    expect(keysOf(['SCAN', '0'])).toEqual(['SCAN', '0', 'MATCH', 'P:*']);
    expect(keysOf(['PUBLISH', 'ch', 'm'])).toEqual(['PUBLISH', 'P:ch', 'm']);
  });

  test("the caller's spelling goes to Redis, but HGETALL in upper case (ioredis reshapes a lower-case one's reply)", () => {
    expect(plan(table, ['set', 'k', 'v'], '').args).toEqual(['set', 'k', 'v']);
    expect(plan(table, ['hgetall', 'h'], '').args).toEqual(['HGETALL', 'h']);
  });

  test('internal keys are never reachable, scripts included', () => {
    expect(() => plan(table, ['GET', '#svc:rl:data:1'], '')).toThrow(/reserved/);
    expect(() => plan(table, ['EVAL', 'return 1', '1', '#svc:changes:'], '')).toThrow(/reserved/);
  });

  test('a tenant may not run what it cannot be confined by', () => {
    expect(plan(table, ['OBJECT', 'ENCODING', 'k'], 'P:', true).args).toEqual(['OBJECT', 'ENCODING', 'P:k']);
    expect(() => plan(table, ['EVAL', 'return 1', '0'], 'P:', true)).toThrow(/outside a prefix/);
    expect(() => plan(table, ['RANDOMKEY'], 'P:', true)).toThrow(/every tenant/);
  });

  test('SORT ... STORE puts its destination under the prefix too', async () => {
    expect(keysOf(['SORT', 'l', 'LIMIT', '0', '5', 'STORE', 'd', 'ALPHA'])).toEqual([
      'SORT',
      'P:l',
      'LIMIT',
      '0',
      '5',
      'STORE',
      'P:d',
      'ALPHA',
    ]);
    await post('/upstash', ['RPUSH', 'sl', '2', '1']);
    expect((await post('/upstash', ['SORT', 'sl', 'STORE', 'sorted'], tenant)).body).toEqual({ result: 0 });
    expect(await t.raw.lrange(`${t.prefix}t1:sorted`, 0, -1)).toEqual([]);
    expect((await post('/upstash', ['SORT', 'sl', 'STORE', 'sorted'])).body).toEqual({ result: 2 });
    expect(await t.raw.lrange(`${t.prefix}sorted`, 0, -1)).toEqual(['1', '2']);
  });

  test('GEORADIUS ... STORE a STORE b stores to b, as Redis does, and b is under the prefix too', async () => {
    expect(keysOf(['GEORADIUS', 'g', '0', '0', '1', 'm', 'STORE', 'a', 'STORE', 'b'])).toEqual([
      'GEORADIUS',
      'P:g',
      '0',
      '0',
      '1',
      'm',
      'STORE',
      'a',
      'STORE',
      'P:b',
    ]);
    expect(keysOf(['GEORADIUSBYMEMBER', 'g', 'x', '1', 'm', 'STOREDIST', 'a', 'STORE', 'store'])).toEqual([
      'GEORADIUSBYMEMBER',
      'P:g',
      'x',
      '1',
      'm',
      'STOREDIST',
      'a',
      'STORE',
      'P:store',
    ]);
    await post('/upstash', ['GEOADD', 'geo', '0', '0', 'm'], tenant);
    const stored = await post(
      '/upstash',
      ['GEORADIUS', 'geo', '0', '0', '1', 'm', 'STORE', 'a', 'STORE', 'b'],
      tenant,
    );
    expect(stored.body).toEqual({ result: 1 });
    expect(await t.raw.zrange(`${t.prefix}t1:b`, 0, -1)).toEqual(['m']);
    expect(await t.raw.exists(`${t.prefix}b`, 'b', `${t.prefix}t1:a`)).toBe(0);
    await t.raw.del(`${t.prefix}t1:geo`, `${t.prefix}t1:b`);
  });

  test('a tenant scan sees no key of another', async () => {
    const tenantScan = await post('/upstash', ['SCAN', '0', 'COUNT', '1000'], tenant);
    expect(tenantScan.body.result[1]).toEqual([]);
  });
});

describe('scripts written for Upstash', () => {
  test('the allow-key-locking shebang flag is dropped, and EVALSHA of the original digest finds the script', async () => {
    const scripted = await testApp('upstash-shebang', { SVC_API_KEYS: JSON.stringify({ keys: [admin] }) });
    try {
      const script = '#!lua flags=allow-key-locking\nreturn KEYS[1]';
      const digest = createHash('sha1').update(script).digest('hex');
      const send = (body: unknown) =>
        request(scripted.data)
          .post('/upstash')
          .set('Authorization', bearer(admin))
          .send(body as object);
      expect((await send(['EVALSHA', digest, '1', 'k'])).body.error).toMatch(/^NOSCRIPT/);
      expect((await send(['EVAL', script, '1', 'k'])).body).toEqual({ result: `${scripted.prefix}k` });
      expect((await send(['EVALSHA', digest, '1', 'k'])).body).toEqual({ result: `${scripted.prefix}k` });
    } finally {
      await scripted.close();
    }
  });
});

describe('subscriptions', () => {
  test('the stream holds the lines @upstash/redis parses', async () => {
    const server = t.data.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    const lines: string[] = [];
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/upstash/subscribe/c1/c2',
      headers: { authorization: bearer(tenant), accept: 'text/event-stream' },
    });
    const done = new Promise<void>((resolve) => {
      req.on('response', (res) => {
        expect(res.headers['content-type']).toBe('text/event-stream');
        res.setEncoding('utf8');
        res.on('data', async (chunk: string) => {
          lines.push(...chunk.split('\n').filter((l) => l.startsWith('data: ')));
          if (lines.length === 2) await post('/upstash', ['PUBLISH', 'c2', 'hi, there'], tenant);
          if (lines.length === 3) resolve();
        });
      });
    });
    req.end('[]');
    await done;
    req.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    expect(lines).toEqual(['data: subscribe,c1,1', 'data: subscribe,c2,2', 'data: message,c2,hi, there']);
  });
});

describe('metrics', () => {
  test('requests count by command, and commands of pipelines too', async () => {
    await post('/upstash', ['GET', 'm']);
    await post('/upstash/pipeline', [
      ['HGET', 'm', 'f'],
      ['HGET', 'm', 'g'],
    ]);
    const text = (await request(t.data).get('/store/admin/metrics').set('Authorization', bearer(admin))).text;
    expect(text).toMatch(/svc_requests_total\{method="POST",endpoint="\/upstash\/get"\} [1-9]/);
    expect(text).toMatch(/svc_upstash_commands_total\{command="hget"\} 2/);
  });
});

describe('settings', () => {
  test('when SVC_UPSTASH_ENABLED=false, then /upstash is 404', async () => {
    const off = await testApp('upstash-off', { SVC_UPSTASH_ENABLED: 'false' });
    try {
      expect((await request(off.data).post('/upstash').send(['PING'])).status).toBe(404);
    } finally {
      await off.close();
    }
  });

  test('when over the rate limit, then 429 {error} with Retry-After', async () => {
    const limited = await testApp('upstash-rl', {
      SVC_RATE_LIMIT_ENABLED: 'true',
      SVC_RATE_LIMIT_REQUESTS: '1',
    });
    try {
      await request(limited.data).post('/upstash').send(['PING']);
      const res = await request(limited.data).post('/upstash').send(['PING']);
      expect(res.status).toBe(429);
      expect(Object.keys(res.body)).toEqual(['error']);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });
});

describe('browsers', () => {
  test('when a page sends a write (an <img> GET, a text/plain form), then 403 or 415 and nothing is written', async () => {
    const open = await testApp('upstash-browser');
    try {
      const key = 'from-a-page';
      const viaImg = await request(open.data)
        .get(`/upstash/set/${key}/x`)
        .set('Sec-Fetch-Site', 'cross-site');
      expect(viaImg.status).toBe(403);
      const viaForm = await request(open.data)
        .post('/upstash')
        .set('Content-Type', 'text/plain')
        .send(JSON.stringify(['SET', key, 'x']));
      expect(viaForm.status).toBe(415);
      expect(viaForm.body.error).toMatch(/form content type/);
      expect(await open.raw.exists(`${open.prefix}${key}`)).toBe(0);
      // A plain client's GET writes as the path form promises, and so does a JSON POST.
      expect((await request(open.data).get(`/upstash/set/${key}/x`)).body).toEqual({ result: 'OK' });
      const json = await request(open.data).post('/upstash').send(['SET', key, 'y']);
      expect(json.body).toEqual({ result: 'OK' });
    } finally {
      await open.close();
    }
  });
});

describe('methods', () => {
  test.each([
    ['put', '/upstash', 'POST'],
    ['get', '/upstash', 'POST'],
    ['delete', '/upstash/pipeline', 'POST'],
    ['put', '/upstash/multi-exec', 'POST'],
    ['delete', '/upstash/get/k', 'GET, POST, HEAD'],
    ['put', '/upstash/set/k/v', 'GET, POST, HEAD'],
  ] as const)('when %s %s is sent, then 405 with Allow: %s and nothing runs', async (method, path, allow) => {
    const res = await request(t.data)[method](path).set('Authorization', bearer(writer));
    expect([res.status, res.headers.allow, Object.keys(res.body)]).toEqual([405, allow, ['error']]);
    expect(await t.raw.exists(`${t.prefix}k`)).toBe(0);
  });
});

test('when the path form’s POST body starts with a byte-order mark, then the value keeps it', async () => {
  const res = await request(t.data)
    .post('/upstash/set/bom')
    .set('Authorization', bearer(writer))
    .set('Content-Type', 'application/octet-stream')
    .send(Buffer.from('\uFEFFv', 'utf8'));
  expect(res.body).toEqual({ result: 'OK' });
  expect(await t.raw.get(`${t.prefix}bom`)).toBe('\uFEFFv');
});
