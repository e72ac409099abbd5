// A key walk finishes whatever SCAN gives per call: the cursor holds no keys (long keys, Valkey's large replies),
// and a page that takes part of a SCAN reply resumes it on the next page. On a database of its own (few keys, so
// that one SCAN reply often holds several keys of the prefix).
import Redis from 'ioredis';
import request from 'supertest';
import { decodeCursor } from '../src/redis/cursor';
import { type TestApp, testApp } from './support/app';
import { databaseUrl } from './support/feed';
import { cleanup } from './support/keys';

let t: TestApp;
let raw: Redis;
beforeAll(async () => {
  t = await testApp('keys-walk', { SVC_REDIS_URL: databaseUrl(6) });
  raw = new Redis(databaseUrl(6));
});
afterAll(async () => {
  await cleanup(raw, t.prefix);
  raw.disconnect();
  await t.close();
});

/** Every page of a walk: the keys seen (with repeats) and the longest cursor given. */
async function walk(query: Record<string, string | number>) {
  const seen: string[] = [];
  let cursor = '';
  let longest = 0;
  for (let pages = 0; pages < 10_000; pages++) {
    const res = await request(t.data)
      .get('/store/keys')
      .query({ ...query, ...(cursor ? { cursor } : {}) });
    expect([res.status, res.body.error]).toEqual([200, undefined]);
    seen.push(...res.body.keys.map((k: { key: string }) => k.key));
    if (res.body.complete) return { seen, longest };
    cursor = res.body.cursor;
    longest = Math.max(longest, cursor.length);
  }
  throw new Error('the walk did not end');
}

test('when 300 keys of ~300 characters are walked one per page, then every page’s cursor is accepted and small', async () => {
  const names = Array.from(
    { length: 300 },
    (_, i) => `walk:${String(i).padStart(4, '0')}:${'x'.repeat(290)}`,
  );
  await raw.mset(...names.flatMap((n) => [`${t.prefix}${n}`, 'v']));
  const { seen, longest } = await walk({ prefix: 'walk:', limit: 1 });
  // Every key at least once; SCAN may give one twice (the contract says so), e.g. while Redis rehashes.
  expect(new Set(seen).size).toBe(300);
  expect(longest).toBeLessThan(100);
});

test('when 2,550 short keys are walked 100 per page, then the walk ends with every key once', async () => {
  const names = Array.from({ length: 2550 }, (_, i) => `short:${i}`);
  await raw.mset(...names.flatMap((n) => [`${t.prefix}${n}`, 'v']));
  const { seen } = await walk({ prefix: 'short:', limit: 100 });
  expect(new Set(seen).size).toBe(2550);
});

test('when a key of a resumed SCAN reply is deleted between pages, then the walk still lists every other key', async () => {
  const names = Array.from({ length: 200 }, (_, i) => `gone:${i}`);
  await raw.mset(...names.flatMap((n) => [`${t.prefix}${n}`, 'v']));
  const seen = new Set<string>();
  let cursor = '';
  let deleted = '';
  for (let pages = 0; pages < 1000; pages++) {
    const res = await request(t.data)
      .get('/store/keys')
      .query({ prefix: 'gone:', limit: 1, ...(cursor ? { cursor } : {}) });
    for (const k of res.body.keys) seen.add(k.key);
    if (res.body.complete) break;
    cursor = res.body.cursor;
    // The first time a page stops inside a SCAN reply, the key it took last is deleted.
    if (!deleted && decodeCursor(cursor).resume) {
      deleted = res.body.keys[0].key;
      await raw.del(`${t.prefix}${deleted}`);
    }
  }
  expect(deleted).not.toBe('');
  for (const name of names) if (name !== deleted) expect(seen.has(name)).toBe(true);
});
