// The statistics windows, with the clock given explicitly: per-second rate, error rate, percentiles;
// and how the figures of several workers add up.
import { Stats } from '../src/observability/stats';
import { summarize } from '../src/observability/summary';

const T0 = 1_700_000_000_000;

test('when requests come over the first seconds of an instance, then per_second averages over its age', () => {
  const stats = new Stats(T0);
  for (let i = 0; i < 10; i++) stats.request('GET', '/store/string/{key}', 1, undefined, T0 + i * 100);
  expect(stats.snapshot(T0 + 2000).requests.per_second).toBe(5);
});

test('when requests are older than 60 s, then they leave the window but stay in the totals', () => {
  const stats = new Stats(T0);
  for (let i = 0; i < 30; i++) stats.request('GET', '/store/string/{key}', 1, 'not_found', T0 + i);
  for (let i = 0; i < 60; i++) stats.request('POST', '/store/hash/{key}', 1, undefined, T0 + 100_000 + i);
  const snapshot = stats.snapshot(T0 + 120_000);
  expect(snapshot.requests.total).toBe(90);
  expect(snapshot.requests.per_second).toBe(1);
  expect(snapshot.errors.total).toBe(30);
  expect(snapshot.errors.rate).toBe(0);
  expect(snapshot.requests.by_endpoint).toEqual({ '/store/string': 30, '/store/hash': 60 });
  expect(snapshot.requests.by_method).toEqual({ GET: 30, POST: 60 });
});

test('when one request in four fails within the window, then errors.rate is 0.25', () => {
  const stats = new Stats(T0);
  for (let i = 0; i < 40; i++)
    stats.request('GET', '/store/set/{key}', 1, i % 4 === 0 ? 'wrong_type' : undefined, T0);
  expect(stats.snapshot(T0 + 1000).errors).toEqual({ total: 10, rate: 0.25, by_type: { wrong_type: 10 } });
});

test('when durations are 1..100 ms, then the average, p95 and p99 are read from them', () => {
  const stats = new Stats(T0);
  for (let ms = 100; ms >= 1; ms--) stats.request('GET', '/store/admin/stats', ms, undefined, T0);
  expect(stats.snapshot(T0).performance).toEqual({
    average_response_time: 50.5,
    p95_response_time: 95,
    p99_response_time: 99,
  });
});

test('when more than 1024 requests were served, then the percentiles use the latest 1024 only', () => {
  const stats = new Stats(T0);
  for (let i = 0; i < 2000; i++) stats.request('GET', '/store/string/{key}', 1000, undefined, T0);
  for (let i = 0; i < 1024; i++) stats.request('GET', '/store/string/{key}', 2, undefined, T0);
  expect(stats.snapshot(T0).performance.p99_response_time).toBe(2);
});

test('when requests match no endpoint, then they count in the totals but in no family', () => {
  const stats = new Stats(T0);
  stats.request('GET', 'unknown', 1, 'unknown_endpoint', T0);
  stats.request('GET', '/docs', 1, undefined, T0);
  const snapshot = stats.snapshot(T0);
  expect(snapshot.requests.total).toBe(2);
  expect(snapshot.requests.by_endpoint).toEqual({});
});

test('when Redis round trips are reported, then operations count commands and latency averages trips', () => {
  const stats = new Stats(T0);
  stats.redis(1, 1, T0);
  stats.redis(3, 5, T0);
  expect(stats.snapshot(T0).database).toEqual({ operations: 6, average_latency: 2 });
});

test("when two workers report, then counts and rates add up and percentiles come from both workers' durations", () => {
  const fast = new Stats(T0);
  const slow = new Stats(T0 + 30_000); // a replacement worker, younger
  for (let ms = 1; ms <= 100; ms++) fast.request('GET', '/store/string/{key}', ms, undefined, T0 + 59_000);
  for (let i = 0; i < 100; i++)
    slow.request('POST', '/store/hash/{key}', 1000, i < 50 ? 'wrong_type' : undefined, T0 + 59_000);
  fast.redis(1, 2, T0 + 59_000);
  slow.redis(3, 4, T0 + 59_000);
  const merged = summarize([fast.part(T0 + 60_000), slow.part(T0 + 60_000)]);
  expect(merged.requests).toEqual({
    total: 200,
    per_second: Number((100 / 60 + 100 / 30).toFixed(3)), // each over its own age
    by_method: { GET: 100, POST: 100 },
    by_endpoint: { '/store/string': 100, '/store/hash': 100 },
  });
  expect(merged.errors).toEqual({ total: 50, rate: 0.25, by_type: { wrong_type: 50 } });
  // Averaging the workers' p95 (95 and 1000) would say 547.5; half of all requests took 1000 ms.
  expect(merged.performance).toEqual({
    average_response_time: 525.25,
    p95_response_time: 1000,
    p99_response_time: 1000,
  });
  expect(merged.database).toEqual({ operations: 6, average_latency: 2 });
});
