// Reloading the configuration without a restart: SVC_CONFIG_FILE is read again and the live settings apply.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { expectSchema } from './support/schemas';

let dir: string;
let file: string;
let t: TestApp;
beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-reload-'));
  file = path.join(dir, 'config.yaml');
  writeFileSync(file, 'SVC_RATE_LIMIT_REQUESTS: 100\nSVC_LOG_LEVEL: info\n');
  t = await testApp('reload', { SVC_CONFIG_FILE: file });
});
afterEach(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const reload = () => request(t.data).post('/store/admin/reload').set('Content-Type', 'application/json');

test('when nothing changed, then the reload says so', async () => {
  const res = await reload();
  expect(res.status).toBe(200);
  expectSchema('ReloadResponse', res.body);
  expect(res.body.message).toBe('Configuration reloaded; nothing changed');
});

test('when the file sets a new rate limit and log level, then both apply without a restart', async () => {
  writeFileSync(file, 'SVC_RATE_LIMIT_REQUESTS: 7\nSVC_RATE_LIMIT_WINDOW: 30\nSVC_LOG_LEVEL: debug\n');
  const res = await reload();
  expect(res.status).toBe(200);
  expect(res.body.message).toContain('applied SVC_RATE_LIMIT_REQUESTS, SVC_RATE_LIMIT_WINDOW, SVC_LOG_LEVEL');
  expect(res.body.message).not.toContain('restart');
  expect(t.context.config.rateLimit).toMatchObject({ requests: 7, windowSeconds: 30 });
  expect(t.context.config.log.level).toBe('debug');
  expect(t.context.logger.level).toBe('debug');
  const info = await request(t.data).get('/store/admin/info');
  expect(info.body.config).toMatchObject({
    rate_limit_requests: 7,
    rate_limit_window: 30,
    log_level: 'debug',
  });
});

test('when the file switches metrics off, then metrics answers 404 from then on', async () => {
  expect((await request(t.data).get('/store/admin/metrics')).status).toBe(200);
  writeFileSync(file, 'SVC_METRICS_ENABLED: false\n');
  await reload();
  expect((await request(t.data).get('/store/admin/metrics')).status).toBe(404);
});

test('when the file switches error details off, then errors carry no details from then on', async () => {
  writeFileSync(file, 'SVC_ERROR_DETAILS: false\n');
  await reload();
  const res = await request(t.data).post('/store/string/k').send({ value: 'v', ttl: 0 });
  expect(res.body.error).toBe('invalid_ttl');
  expect(res.body.details).toBeUndefined();
});

test('when a setting that needs a restart changed, then it is named and the running value stays', async () => {
  writeFileSync(file, 'SVC_PORT: 9999\nSVC_MAX_BODY_BYTES: 2048\nSVC_LOG_LEVEL: warn\n');
  const res = await reload();
  expect(res.status).toBe(200);
  expect(res.body.message).toBe(
    // The admin port follows SVC_PORT when SVC_ADMIN_PORT is unset, so it changed too.
    'Configuration reloaded; applied SVC_LOG_LEVEL; SVC_PORT, SVC_MAX_BODY_BYTES, SVC_ADMIN_PORT changed and need a restart',
  );
  expect(t.context.config.port).toBe(8080);
  expect(t.context.config.limits.maxBodyBytes).toBe(10485760);
  expect(t.context.config.log.level).toBe('warn');
});

test('when the new file is invalid, then 500 lists every problem and the running config stays', async () => {
  writeFileSync(file, 'SVC_RATE_LIMIT_REQUESTS: 0\nSVC_LOG_LEVEL: loud\nSVC_NOPE: 1\n');
  const before = t.context.config;
  const res = await reload();
  expect(res.status).toBe(500);
  expect(res.body.error).toBe('server_error');
  expect(res.body.message).toMatch(/^Configuration not reloaded: /);
  expect(res.body.message).toContain('SVC_RATE_LIMIT_REQUESTS');
  expect(res.body.message).toContain('SVC_LOG_LEVEL');
  expect(res.body.message).toContain('SVC_NOPE');
  expect(t.context.config).toBe(before);
});

test('when an onReload hook is registered, then it gets the new config, and its failure cancels the reload', async () => {
  const seen: number[] = [];
  t.context.onReload.push((config) => {
    seen.push(config.rateLimit.requests);
    if (config.rateLimit.requests === 13) throw new Error('keys file unreadable');
  });
  writeFileSync(file, 'SVC_RATE_LIMIT_REQUESTS: 12\n');
  expect((await reload()).status).toBe(200);
  writeFileSync(file, 'SVC_RATE_LIMIT_REQUESTS: 13\n');
  const failed = await reload();
  expect(failed.status).toBe(500);
  expect(failed.body.message).toBe('Configuration not reloaded: keys file unreadable');
  expect(seen).toEqual([12, 13]);
  expect(t.context.config.rateLimit.requests).toBe(12);
});

test('when the reload runs without HTTP (as on SIGHUP), then it applies the same way', async () => {
  writeFileSync(file, 'SVC_RATE_LIMIT_REQUESTS: 5\n');
  await expect(t.context.reload()).resolves.toContain('applied SVC_RATE_LIMIT_REQUESTS');
  expect(t.context.config.rateLimit.requests).toBe(5);
});
