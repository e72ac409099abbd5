// The reply budget on /upstash (SVC_MAX_REPLY_ELEMENTS / _BYTES, small here): whole reads of large keys, KEYS, set
// algebra and over-budget pipelines / transactions are refused before Redis builds the reply; the rest is unchanged.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from '@upstash/redis';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
let server: Server;
let url: string;
const redis = () => new Redis({ url, token: 'any', retry: false, automaticDeserialization: false });
const post = (path: string, body: unknown) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const TOO_LARGE = /reply too large.*SVC_MAX_REPLY_ELEMENTS/;

beforeAll(async () => {
  t = await testApp('upstash-bounds', { SVC_MAX_REPLY_ELEMENTS: '1000', SVC_MAX_REPLY_BYTES: '100000' });
  server = t.data.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/upstash`;
  const p = t.prefix;
  const many = Array.from({ length: 1500 }, (_, i) => `m${i}`);
  const batch = t.raw.pipeline();
  batch.hset(`${p}big-hash`, Object.fromEntries(many.map((m) => [m, 'v'])));
  batch.rpush(`${p}big-list`, ...many);
  batch.sadd(`${p}big-set`, ...many);
  batch.sadd(`${p}set-a`, ...many.slice(0, 600));
  batch.sadd(`${p}set-b`, ...many.slice(600, 1200));
  batch.zadd(`${p}big-zset`, ...many.flatMap((m, i) => [i, m]));
  for (let i = 0; i < 1200; i++) batch.xadd(`${p}big-stream`, '*', 'f', 'v');
  batch.set(`${p}big-string`, 'x'.repeat(200_000));
  batch.set(`${p}half-a`, 'x'.repeat(60_000));
  batch.set(`${p}half-b`, 'x'.repeat(60_000));
  for (let i = 0; i < 1001; i++) batch.set(`${p}many:${i}`, '1');
  batch.hset(`${p}small-hash`, { f: 'v', g: '2' });
  batch.zadd(`${p}small-zset`, 1, 'one', 2, 'two');
  await batch.exec();
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

describe('when a read would answer more than the reply budget, then it is refused before Redis builds it', () => {
  test('HGETALL of a 1,500-field hash: 413 {error} over HTTP, an UpstashError naming the fix in the SDK', async () => {
    const res = await post('', ['HGETALL', 'big-hash']);
    expect(res.status).toBe(413);
    const body = (await res.json()) as { error: string };
    expect(body.error).toMatch(TOO_LARGE);
    expect(body.error).toMatch(/HSCAN/);
    await expect(redis().hgetall('big-hash')).rejects.toMatchObject({
      name: 'UpstashError',
      message: expect.stringMatching(TOO_LARGE),
    });
  });

  test('whole lists, sets, sorted sets, streams, strings, set algebra and KEYS', async () => {
    const r = redis();
    const refused = [
      () => r.hkeys('big-hash'),
      () => r.lrange('big-list', 0, -1),
      () => r.smembers('big-set'),
      () => r.sunion('set-a', 'set-b'),
      () => r.zrange('big-zset', 0, -1),
      () => r.zrange('big-zset', 0, 600, { withScores: true }),
      () => r.zrange('big-zset', '-inf', '+inf', { byScore: true }),
      () => r.xrange('big-stream', '-', '+'),
      () => r.get('big-string'),
      () => r.mget('half-a', 'half-b'),
      () => r.keys('*'),
      () => r.srandmember('big-set', -5000),
      () => r.hscan('big-hash', 0, { count: 5000 }),
    ];
    for (const read of refused) await expect(read()).rejects.toThrow(TOO_LARGE);
  });

  test('parts of the same keys answer: HSCAN pages, ranges, COUNT / LIMIT, GETRANGE, one of the strings', async () => {
    const r = redis();
    const fields = new Set<string>();
    let cursor = '0';
    for (let pages = 0; pages < 200; pages++) {
      const [next, items] = await r.hscan('big-hash', cursor, { count: 200 });
      for (let i = 0; i < items.length; i += 2) fields.add(String(items[i]));
      cursor = String(next);
      if (cursor === '0') break;
    }
    expect(fields.size).toBe(1500);
    expect(await r.lrange('big-list', 0, 9)).toHaveLength(10);
    expect(await r.lrange('big-list', -3, -1)).toEqual(['m1497', 'm1498', 'm1499']);
    expect(await r.zrange('big-zset', 0, 4, { withScores: true })).toHaveLength(10);
    expect(await r.zrange('big-zset', '-inf', '+inf', { byScore: true, offset: 0, count: 5 })).toHaveLength(
      5,
    );
    expect(await r.xrange('big-stream', '-', '+', 7)).toBeTruthy();
    expect(await r.getrange('big-string', 0, 9)).toBe('xxxxxxxxxx');
    expect(await r.get('half-a')).toHaveLength(60_000);
    expect(await r.sunion('set-a')).toHaveLength(600);
  });
});

describe('when a command has more arguments than a Lua script can pass on, then it is sized first and sent as it is', () => {
  test('MGET of 8,000 keys is refused (8,000 elements); SUNION of 8,000 empty keys answers', async () => {
    const names = Array.from({ length: 8000 }, (_, i) => `absent:${i}`);
    const mget = await post('', ['MGET', ...names]);
    expect(mget.status).toBe(413);
    expect(((await mget.json()) as { error: string }).error).toMatch(TOO_LARGE);
    const sunion = await post('', ['SUNION', ...names]);
    expect([sunion.status, await sunion.json()]).toEqual([200, { result: [] }]);
    const pipeline = await post('/pipeline', [
      ['SET', 'before', '1'],
      ['SUNION', ...names],
      ['GET', 'before'],
    ]);
    expect(await pipeline.json()).toEqual([{ result: 'OK' }, { result: [] }, { result: '1' }]);
  });
});

describe('when a pipeline or transaction reads more than the budget in total, then it is refused whole', () => {
  test('each read within the budget, their sum above: 413 and nothing runs, its write included', async () => {
    const commands = [
      ['SET', 'written', '1'],
      ['LRANGE', 'big-list', 0, 599],
      ['SMEMBERS', 'set-a'],
    ];
    for (const path of ['/pipeline', '/multi-exec']) {
      const res = await post(path, commands);
      expect(res.status).toBe(413);
      expect(((await res.json()) as { error: string }).error).toMatch(TOO_LARGE);
    }
    expect(await t.raw.exists(`${t.prefix}written`)).toBe(0);
    const p = redis().pipeline().set('written', '1').lrange('big-list', 0, 599).smembers('set-a');
    await expect(p.exec()).rejects.toThrow(TOO_LARGE);
    const tx = redis().multi().set('written', '1').hgetall('big-hash');
    await expect(tx.exec()).rejects.toThrow(TOO_LARGE);
    expect(await t.raw.exists(`${t.prefix}written`)).toBe(0);
  });

  test('within the budget they answer as before', async () => {
    const items = await redis()
      .pipeline()
      .lrange('big-list', 0, 299)
      .smembers('set-a')
      .hgetall('small-hash')
      .exec();
    expect(items[0]).toHaveLength(300);
    expect(items[1]).toHaveLength(600);
    expect(items[2]).toEqual(['f', 'v', 'g', '2']);
  });
});

describe('when a read is small, then its reply keeps its exact shape', () => {
  test('nulls, flat pairs, scores, nested stream entries and Redis errors are as Redis answers them', async () => {
    const cases: [unknown[], unknown][] = [
      [['GET', 'missing'], null],
      [
        ['MGET', 'missing', 'small-hash'],
        [null, null],
      ],
      [
        ['HGETALL', 'small-hash'],
        ['f', 'v', 'g', '2'],
      ],
      [['HGETALL', 'missing'], []],
      [
        ['ZRANGE', 'small-zset', 0, -1, 'WITHSCORES'],
        ['one', '1', 'two', '2'],
      ],
      [['LRANGE', 'missing', 0, -1], []],
    ];
    for (const [command, result] of cases) {
      const res = await post('', command);
      expect([command, res.status, await res.json()]).toEqual([command, 200, { result }]);
    }
    const stream = (await (await post('', ['XRANGE', 'big-stream', '-', '+', 'COUNT', 1])).json()) as {
      result: [string, string[]][];
    };
    expect(stream.result[0]?.[1]).toEqual(['f', 'v']);
    const wrong = await post('', ['LRANGE', 'small-hash', 0, -1]);
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toEqual({
      error: 'WRONGTYPE Operation against a key holding the wrong kind of value',
    });
    // GET reads without a script (GETRANGE capped at the budget): an empty string, a wrong type, exactly the budget.
    await t.raw.set(`${t.prefix}empty`, '');
    await t.raw.set(`${t.prefix}at-budget`, 'y'.repeat(100_000));
    expect(await (await post('/get/empty', undefined)).json()).toEqual({ result: '' });
    expect(await (await post('/get/small-hash', undefined)).json()).toEqual({
      error: 'WRONGTYPE Operation against a key holding the wrong kind of value',
    });
    expect(
      ((await (await post('/get/at-budget', undefined)).json()) as { result: string }).result,
    ).toHaveLength(100_000);
    const syntax = await post('', ['LRANGE', 'big-list', 'a', 'b']);
    expect(syntax.status).toBe(400);
    expect(((await syntax.json()) as { error: string }).error).toMatch(/^ERR value is not an integer/);
  });
});
