// Statistics, metrics and request logs move as traffic is sent; labels and logs carry templates, never keys.
import { once } from 'node:events';
import { Writable } from 'node:stream';
import request from 'supertest';
import winston from 'winston';
import {
  createLogger,
  flushLogs,
  infoEnabled,
  logRequest,
  reconfigureLogger,
} from '../src/observability/logger';
import { type TestApp, testApp } from './support/app';
import { count, scrape, typeOf, value } from './support/prometheus';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('observability');
});
afterAll(() => t.close());

const api = () => request(t.data);
const KEY = 'private-key-name';
const VALUE = 'private-value-text';

describe('statistics', () => {
  test('when requests are sent, then totals, families, methods, errors and Redis operations move', async () => {
    const before = (await api().get('/store/admin/stats')).body;
    await api().post(`/store/string/${KEY}`).send({ value: VALUE });
    await api().get(`/store/string/${KEY}`);
    await api().get(`/api/string/${KEY}/ttl`);
    await api().get('/store/string/stats-missing');
    await api().get('/store/string/bad%20key');
    await api().get('/store/nothing/here');
    const after = (await api().get('/store/admin/stats')).body;

    // 6 requests above, plus the first stats request itself.
    expect(after.requests.total - before.requests.total).toBe(7);
    const delta = (path: (s: typeof after) => number | undefined) => (path(after) ?? 0) - (path(before) ?? 0);
    expect(delta((s) => s.requests.by_method.POST)).toBe(1);
    expect(delta((s) => s.requests.by_method.GET)).toBe(6);
    expect(delta((s) => s.requests.by_endpoint['/store/string'])).toBe(5);
    expect(delta((s) => s.requests.by_endpoint['/store/admin'])).toBe(1);
    expect(Object.keys(after.requests.by_endpoint)).not.toContain('/api/string');
    expect(delta((s) => s.errors.total)).toBe(3);
    expect(delta((s) => s.errors.by_type.not_found)).toBe(1);
    expect(delta((s) => s.errors.by_type.invalid_key)).toBe(1);
    expect(delta((s) => s.errors.by_type.unknown_endpoint)).toBe(1);
    // POST, GET, ttl and the missing key each sent one command; the invalid key none.
    expect(delta((s) => s.database.operations)).toBe(4);
    expect(after.requests.per_second).toBeGreaterThan(0);
    expect(after.errors.rate).toBeGreaterThan(0);
    expect(after.errors.rate).toBeLessThanOrEqual(1);
    expect(after.performance.average_response_time).toBeGreaterThan(0);
    expect(after.performance.p99_response_time).toBeGreaterThanOrEqual(after.performance.p95_response_time);
    expect(after.database.average_latency).toBeGreaterThan(0);
  });
});

describe('metrics', () => {
  const labels = { method: 'GET', endpoint: '/store/string/{key}' };

  test('when requests are sent, then counters and histograms move, labelled by route template', async () => {
    const before = await scrape(t.data);
    await api().get(`/store/string/${KEY}-a`);
    await api().get(`/api/string/${KEY}-b`);
    await api().get('/store/nothing/here');
    const after = await scrape(t.data);

    expect(value(after, 'svc_requests_total', labels) - value(before, 'svc_requests_total', labels)).toBe(2);
    expect(
      count(after, 'svc_response_time_seconds', labels) - count(before, 'svc_response_time_seconds', labels),
    ).toBe(2);
    const notFound = { type: 'not_found' };
    expect(value(after, 'svc_errors_total', notFound) - value(before, 'svc_errors_total', notFound)).toBe(2);
    const unknown = { method: 'GET', endpoint: 'unknown' };
    expect(value(after, 'svc_requests_total', unknown) - value(before, 'svc_requests_total', unknown)).toBe(
      1,
    );
    expect(
      count(after, 'svc_redis_command_duration_seconds') -
        count(before, 'svc_redis_command_duration_seconds'),
    ).toBe(2);
    expect(value(after, 'svc_redis_commands_total') - value(before, 'svc_redis_commands_total')).toBe(2);
  });

  test('then the families have their Prometheus types, the default process metrics are there, and no label holds a key', async () => {
    await api().get(`/store/string/${KEY}`);
    const res = await api().get('/store/admin/metrics');
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const scraped = await scrape(t.data);
    expect(typeOf(scraped, 'svc_requests_total')).toBe('COUNTER');
    expect(typeOf(scraped, 'svc_response_time_seconds')).toBe('HISTOGRAM');
    expect(typeOf(scraped, 'svc_errors_total')).toBe('COUNTER');
    expect(typeOf(scraped, 'svc_redis_command_duration_seconds')).toBe('HISTOGRAM');
    expect(typeOf(scraped, 'process_cpu_user_seconds_total')).toBe('COUNTER');
    expect(typeOf(scraped, 'nodejs_heap_size_used_bytes')).toBe('GAUGE');
    expect(res.text).not.toContain(KEY);
  });

  test('when two apps run in one process, then each has its own registry', async () => {
    const other = await testApp('observability-other');
    try {
      await request(other.data).get('/store/string/only-here');
      const mine = await scrape(t.data);
      const theirs = await scrape(other.data);
      expect(value(theirs, 'svc_requests_total', labels)).toBe(1);
      expect(value(mine, 'svc_requests_total', labels)).toBeGreaterThan(1);
    } finally {
      await other.close();
    }
  });
});

describe('request logs', () => {
  const lines: string[] = [];
  const capture = (format: 'json' | 'text', level: 'info' | 'warn' = 'info') => {
    lines.length = 0;
    t.context.logger.configure({
      level,
      format: createLogger({ level, format }).format,
      transports: [
        new winston.transports.Stream({
          stream: new Writable({
            write(chunk, _encoding, done) {
              lines.push(String(chunk).trim());
              done();
            },
          }),
        }),
      ],
    });
  };
  /** 'finish' may come a moment after the client has its answer. */
  const logged = async (n: number) => {
    for (let i = 0; i < 100 && lines.length < n; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    return lines;
  };
  afterAll(() => t.context.logger.configure({ silent: true }));

  test('when a request is served, then one JSON line has method, route template, status, duration and request id', async () => {
    capture('json');
    const res = await api()
      .post(`/store/string/${KEY}`)
      .set('X-Request-ID', 'log-test-1')
      .send({ value: VALUE });
    const [line, ...rest] = await logged(1);
    expect(rest).toEqual([]);
    const entry = JSON.parse(line as string);
    expect(entry).toMatchObject({
      level: 'info',
      message: 'request',
      method: 'POST',
      route: '/store/string/{key}',
      status: res.status,
      request_id: 'log-test-1',
    });
    expect(typeof entry.duration_ms).toBe('number');
    expect(line).not.toContain(KEY);
    expect(line).not.toContain(VALUE);
  });

  test('when the format is text, then the line reads key=value', async () => {
    capture('text');
    await api().get(`/store/string/${KEY}-missing`).set('X-Request-ID', 'log-test-2');
    const [line] = await logged(1);
    expect(line).toMatch(
      / info request method=GET route=\/store\/string\/\{key\} status=404 duration_ms=[\d.]+ request_id=log-test-2 error=not_found$/,
    );
  });

  test('when Redis is unreachable, then the 503 is logged at warn with its cause, even at level warn', async () => {
    capture('json', 'warn');
    await api().get('/store/admin/ping');
    const ended = once(t.redis, 'end');
    t.redis.disconnect();
    try {
      expect((await api().get(`/store/string/${KEY}`)).status).toBe(503);
    } finally {
      await ended;
      await t.redis.connect();
    }
    const [line] = await logged(1);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(line as string)).toMatchObject({
      level: 'warn',
      status: 503,
      error: 'service_unavailable',
      cause: expect.any(String),
    });
    expect(line).not.toContain(KEY);
  });

  test.each(['json', 'text'] as const)(
    'when the logger writes %s to stdout, then a request line skips winston and reads as winston writes it',
    (format) => {
      const written: string[] = [];
      const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
        written.push(String(chunk));
        return true;
      });
      try {
        const logger = createLogger({ level: 'info', format });
        const fields = {
          method: 'GET',
          route: '/store/string/{key}',
          status: 404,
          duration_ms: 0.5,
          request_id: 'r-1',
          error: 'not_found',
        };
        const viaWinston = jest.spyOn(logger, 'info');
        logRequest(logger, fields);
        expect(viaWinston).not.toHaveBeenCalled();
        logger.info('request', fields);
        flushLogs();
        const [direct, winstons] = written.join('').trim().split('\n');
        const noTime = (line = '') => line.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/, 'T');
        expect(noTime(direct)).toBe(noTime(winstons));
        expect(direct).toContain('r-1');
      } finally {
        write.mockRestore();
      }
    },
  );

  test('the request log follows the level, set at creation, by a reload or by assignment', () => {
    const logger = createLogger({ level: 'warn', format: 'json' });
    expect(infoEnabled(logger)).toBe(false);
    reconfigureLogger(logger, { level: 'debug', format: 'json' });
    expect(infoEnabled(logger)).toBe(true);
    logger.level = 'error';
    expect(infoEnabled(logger)).toBe(false);
    logger.level = 'info';
    expect(infoEnabled(logger)).toBe(true);
    for (const level of ['error', 'warn', 'info', 'debug']) {
      logger.level = level;
      expect(infoEnabled(logger)).toBe(logger.isInfoEnabled());
    }
  });
});
