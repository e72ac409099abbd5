// The unmodified @upstash/redis client against the running service's /upstash endpoint: commands, pipelines,
// transactions, pub/sub, read-your-writes, a tenant-prefixed token and a read-only token.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from '@upstash/redis';
import { type TestApp, testApp } from './support/app';
import { apiKey } from './support/auth';

const admin = apiKey('up-admin', ['read', 'write', 'admin']);
const writer = apiKey('up-writer', ['read', 'write']);
const reader = apiKey('up-reader', ['read']);
const tenant = apiKey('up-tenant', ['read', 'write'], 'tenant-a:');

let t: TestApp;
let server: Server;
let url: string;
const client = (entry: { key: string }, options: Record<string, unknown> = {}) =>
  new Redis({ url, token: entry.key, retry: false, ...options });

beforeAll(async () => {
  t = await testApp('upstash-sdk', {
    SVC_API_KEYS: JSON.stringify({ keys: [admin, writer, reader, tenant] }),
    SVC_CHANGES_ENABLED: 'true',
    // A transaction holds a connection of the waiters' pool, at most 4 per client by default: the test of
    // concurrent transactions runs 8 at once, which passed or got a 429 depending on how they overlapped.
    SVC_LIST_MAX_WAITERS_PER_CLIENT: '16',
  });
  server = t.data.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/upstash`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

describe('when the SDK runs commands of each type, then Redis holds them under the service prefix', () => {
  test('strings, with JSON values and expiry', async () => {
    const redis = client(writer);
    expect(await redis.set('s', { a: 1 }, { ex: 100 })).toBe('OK');
    expect(await redis.get('s')).toEqual({ a: 1 });
    expect(await redis.incrby('n', 5)).toBe(5);
    expect(await redis.mget('s', 'n', 'missing')).toEqual([{ a: 1 }, 5, null]);
    expect(await redis.set('emoji', 'héllo 👋')).toBe('OK');
    expect(await redis.get('emoji')).toBe('héllo 👋');
    expect(await t.raw.ttl(`${t.prefix}s`)).toBeGreaterThan(0);
  });

  test('hashes, sets, lists and sorted sets', async () => {
    const redis = client(writer);
    expect(await redis.hset('h', { f: 'v', g: 2 })).toBe(2);
    expect(await redis.hgetall('h')).toEqual({ f: 'v', g: 2 });
    expect(await redis.sadd('set', 'a', 'b')).toBe(2);
    expect((await redis.smembers('set')).sort()).toEqual(['a', 'b']);
    expect(await redis.rpush('list', 'x', 'y', 'z')).toBe(3);
    expect(await redis.lrange('list', 0, -1)).toEqual(['x', 'y', 'z']);
    expect(await redis.zadd('z', { score: 2, member: 'two' }, { score: 1, member: 'one' })).toBe(2);
    expect(await redis.zrange('z', 0, -1, { withScores: true })).toEqual(['one', 1, 'two', 2]);
    expect(await t.raw.hget(`${t.prefix}h`, 'f')).toBe('v');
  });

  test('streams with a consumer group', async () => {
    const redis = client(writer);
    const id = await redis.xadd('stream', '*', { field: 'value' });
    expect(await redis.xgroup('stream', { type: 'CREATE', group: 'g', id: '0' })).toBe('OK');
    const read = (await redis.xreadgroup('g', 'c1', 'stream', '>')) as [string, [string, string[]][]][];
    expect(read[0]?.[0]).toBe('stream');
    expect(read[0]?.[1][0]?.[0]).toBe(id);
    expect(await redis.xack('stream', 'g', id)).toBe(1);
  });

  test('blocking commands (the SDK has none: sent as its own requester would) wait on a connection of their own', async () => {
    const blpop = (...args: (string | number)[]) =>
      fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${writer.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(['BLPOP', ...args]),
      }).then((res) => res.json());
    const waiting = blpop('queue', 5);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await client(writer).rpush('queue', 'job');
    expect(await waiting).toEqual({ result: ['queue', 'job'] });
    expect(await blpop('empty-queue', 0.1)).toEqual({ result: null });
  });

  test('scripts need an admin token without a prefix', async () => {
    const script = 'return redis.call("GET", KEYS[1])';
    await client(admin).set('for-script', 'x');
    expect(await client(admin).eval(script, ['for-script'], [])).toBe('x');
    await expect(client(writer).eval(script, ['for-script'], [])).rejects.toThrow(/admin/);
  });
});

describe('pipelines and transactions', () => {
  test('a pipeline answers each command, errors in place', async () => {
    const redis = client(writer);
    await redis.set('p-str', 'text');
    const p = redis.pipeline();
    p.incr('p-n');
    p.incr('p-str');
    p.get('p-n');
    const results = await p.exec({ keepErrors: true });
    expect(results[0]).toEqual({ result: 1, error: undefined });
    expect(results[1]?.error).toMatch(/not an integer/);
    expect(results[2]?.result).toBe(1);
  });

  test('a transaction applies atomically', async () => {
    const redis = client(writer);
    const tx = redis.multi();
    tx.set('tx-a', '1');
    tx.incr('tx-a');
    tx.get('tx-a');
    expect(await tx.exec()).toEqual(['OK', 2, 2]);
  });

  test('concurrent transactions never share a connection', async () => {
    const redis = client(writer);
    const runs = Array.from({ length: 8 }, (_, i) => {
      const tx = redis.multi();
      tx.del(`tx-c${i}`);
      tx.incr(`tx-c${i}`);
      tx.incr(`tx-c${i}`);
      return tx.exec();
    });
    for (const result of await Promise.all(runs)) expect(result).toEqual([0, 1, 2]);
  });

  test('auto-pipelining batches concurrent commands', async () => {
    const redis = client(writer, { enableAutoPipelining: true });
    const [a, b, c] = await Promise.all([
      redis.set('ap-a', 'A'),
      redis.set('ap-b', 'B'),
      redis.mget('ap-a', 'ap-b'),
    ]);
    expect([a, b]).toEqual(['OK', 'OK']);
    expect(c).toEqual(['A', 'B']);
  });
});

describe('read-your-writes', () => {
  test('the sync token changes after each write and the client sends it back', async () => {
    const redis = client(writer);
    await redis.set('ryw', '1');
    const first = (redis as unknown as { client: { upstashSyncToken: string } }).client.upstashSyncToken;
    await redis.get('ryw');
    expect((redis as unknown as { client: { upstashSyncToken: string } }).client.upstashSyncToken).toBe(
      first,
    );
    await redis.set('ryw', '2');
    const after = (redis as unknown as { client: { upstashSyncToken: string } }).client.upstashSyncToken;
    expect(after).not.toBe(first);
    expect(await redis.get('ryw')).toBe(2);
  });
});

describe('pub/sub', () => {
  test('a subscriber receives what PUBLISH sends, under the tenant prefix', async () => {
    const sub = client(tenant).subscribe<string>(['news']);
    const got = new Promise((resolve) => sub.on('message', resolve));
    const subscribed = new Promise((resolve) => sub.on('subscribe', resolve));
    await subscribed;
    expect(await client(tenant).publish('news', 'hello')).toBe(1);
    expect(await got).toEqual({ channel: 'news', message: 'hello' });
    // The same channel name outside the tenant is another channel.
    expect(await client(writer).publish('news', 'other')).toBe(0);
    await sub.unsubscribe();
  });

  test('a pattern subscriber receives pmessage events', async () => {
    const sub = client(writer).psubscribe<{ n: number }>(['ev:*']);
    const got = new Promise((resolve) => sub.on('pmessage', resolve));
    await new Promise((resolve) => sub.on('psubscribe', resolve));
    await client(writer).publish('ev:1', { n: 1 });
    expect(await got).toEqual({ pattern: 'ev:*', channel: 'ev:1', message: { n: 1 } });
    await sub.unsubscribe();
  });
});

describe('tenants and permissions', () => {
  test('a tenant-prefixed token sees only its keys, SCAN and KEYS included', async () => {
    const redis = client(tenant);
    await redis.set('mine', 'x');
    await client(writer).set('theirs', 'y');
    expect(await t.raw.get(`${t.prefix}tenant-a:mine`)).toBe('x');
    // Other test files' keys share this Redis: a SCAN may need more than one call to cover it.
    const scanAll = async (withType: boolean) => {
      const found: unknown[] = [];
      let cursor: string | number = 0;
      do {
        const [next, keys]: [string, unknown[]] = withType
          ? await redis.scan(cursor, { count: 1000, withType: true })
          : await redis.scan(cursor, { count: 1000 });
        found.push(...keys);
        cursor = next;
      } while (String(cursor) !== '0');
      return found;
    };
    expect(await scanAll(false)).toEqual(['mine']);
    expect(await redis.keys('*')).toEqual(['mine']);
    expect(await scanAll(true)).toEqual([{ key: 'mine', type: 'string' }]);
    expect(await redis.get('theirs')).toBeNull();
    await expect(redis.dbsize()).rejects.toThrow(/every tenant/);
    await expect(redis.eval('return 1', [], [])).rejects.toThrow(/prefix/);
  });

  test('a tenant pop names its key without the prefix', async () => {
    const redis = client(tenant);
    await redis.rpush('tq', 'a');
    expect(await redis.lmpop(1, ['tq'], 'LEFT')).toEqual(['tq', ['a']]);
  });

  test('a read-only token reads but cannot write', async () => {
    await client(writer).set('ro', 'v');
    const redis = client(reader);
    expect(await redis.get('ro')).toBe('v');
    await expect(redis.set('ro', 'w')).rejects.toThrow(/'write' permission/);
    const p = redis.pipeline();
    p.get('ro');
    p.del('ro');
    await expect(p.exec()).rejects.toThrow(/'write' permission/);
    expect(await t.raw.get(`${t.prefix}ro`)).toBe('v');
  });

  test('flushes need admin and, under a prefix, remove only its keys', async () => {
    await expect(client(writer).flushdb()).rejects.toThrow(/admin/);
  });
});

describe('the change feed', () => {
  test('a write through the endpoint appears in the feed with its command as op', async () => {
    await client(writer).hset('fed', { a: '1' });
    const entries = await t.raw.xrange(`#svc:changes:${t.prefix}`, '-', '+');
    const events = entries.map(([, f]) => f.join(' '));
    expect(events).toContain('k fed t hash o hset');
  });

  test('the writes of a pipeline appear in the feed, each with its command; one that changed nothing does not', async () => {
    const p = client(writer).pipeline();
    p.set('fed-p', '1');
    p.del('fed-missing');
    p.get('fed-p');
    expect(await p.exec()).toEqual(['OK', 0, 1]);
    const entries = await t.raw.xrange(`#svc:changes:${t.prefix}`, '-', '+');
    const events = entries.map(([, f]) => f.join(' '));
    expect(events).toContain('k fed-p t string o set');
    expect(events.some((e) => e.startsWith('k fed-missing'))).toBe(false);
  });
});
