// What the sorted-set test files share: the service under test, raw access to a key, and a seeded leaderboard.
import request from 'supertest';
import { type TestApp, testApp } from './app';

/** A test app named `name` (started before the file's tests, closed after them) with sorted-set helpers. */
export function zsetTestApp(name: string) {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp(name);
  });
  afterAll(() => t.close());
  const raw = (key: string) => `${t.prefix}${key}`;
  return {
    /** A Redis client of its own, to seed and check keys behind the service's back. */
    redis: () => t.raw,
    api: () => request(t.data),
    raw,
    /** The stored members and scores, lowest first, as Redis answers WITHSCORES. */
    all: async (key: string) => t.raw.zrange(raw(key), 0, -1, 'WITHSCORES'),
    /** A sorted set of ten players p0..p9 with scores 0, 10, ..., 90. */
    seed: async (key: string) =>
      t.raw.zadd(raw(key), ...Array.from({ length: 10 }, (_, i) => [i * 10, `p${i}`]).flat()),
  };
}
