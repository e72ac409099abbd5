// The gateway's own digests of plain reads (src/engine/plain-reads.ts): a hash's pairs digested from their text when
// it decodes exactly, a large string's ETag remembered between reads; each must be the ETag the script answers.
import { loadConfig } from '../src/config';
import { plainRead } from '../src/engine/plain-reads';
import type { Reply } from '../src/redis/client';
import { createRedis, type RedisClient } from '../src/redis/client';
import { createKeyspace } from '../src/redis/keys';
import type { Store } from '../src/redis/store';
import { type RedisServer, startRedisServer } from './support/redis-server';

let server: RedisServer;
let redis: RedisClient;
let store: Store;
beforeAll(async () => {
  server = await startRedisServer();
  redis = createRedis(loadConfig({ SVC_REDIS_URL: server.url, SVC_KEY_PREFIX: 'd:' }));
  await redis.connect();
  store = { redis, keyspace: createKeyspace('d:'), deadlineMs: 5_000 };
});
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});

/** The ETag of the plain read and the script's, for `typedEtag r2 <type> ...` (text, or Buffer replies). */
async function etags(key: string, buffers: boolean, ...args: string[]): Promise<[unknown, unknown]> {
  const command = { name: 'typedEtag', keys: [key], args: ['r2', ...args], ...(buffers ? { buffers } : {}) };
  const plain = (await plainRead(store, command)) as Reply;
  expect(plain).toBeDefined();
  // The script's ETag is hex digits: its text reply holds it as it is, whatever the value's bytes.
  const script = (await redis.typedEtag(`d:${key}`, 'r2', ...args)) as [unknown, string | null];
  return [(plain[1] as [unknown, unknown])[1], script[1]];
}

test('when a hash holds only UTF-8 text beyond ASCII, then its ETag digested from the text is the script one', async () => {
  await redis.hset('d:h', 'é', '✓ 😀', 'plain', 'value', '__proto__', 'x', '', 'empty name', 'ünïcode', '');
  for (const buffers of [false, true]) {
    const [plain, script] = await etags('h', buffers, 'hash', 'WHOLE', 'HGETALL');
    expect(plain).toBe(script);
  }
});

test('when a large string is read again, changed or not, then each ETag is the script one', async () => {
  const value = Buffer.alloc(64 * 1024, 'a');
  for (const buffers of [false, true]) {
    await redis.set('d:big', value);
    const [first, firstScript] = await etags('big', buffers, 'string', 'GET');
    expect(first).toBe(firstScript);
    expect(await etags('big', buffers, 'string', 'GET')).toEqual([first, first]);
    // The same length, one byte different (the last): a new digest.
    await redis.setrange('d:big', value.length - 1, 'b');
    const [changed, changedScript] = await etags('big', buffers, 'string', 'GET');
    expect(changed).toBe(changedScript);
    expect(changed).not.toBe(first);
    // Text beyond ASCII (two bytes a character), then bytes that are not UTF-8 read as Buffers.
    await redis.set('d:big', 'é'.repeat(5000));
    const [text, textScript] = await etags('big', buffers, 'string', 'GET');
    expect(text).toBe(textScript);
  }
  await redis.set('d:big', Buffer.alloc(8192, 0xff));
  const [bytes, bytesScript] = await etags('big', true, 'string', 'GET');
  expect(bytes).toBe(bytesScript);
});
