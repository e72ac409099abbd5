// Leases: a TTL kept alive by its holder (once, or over an event stream or a WebSocket whose loss ends it after a
// grace period);
// the locks attached to it end with it.
import http from 'node:http';
import request from 'supertest';
import WebSocket from 'ws';
import { type Served, served } from './support/served';
import { until } from './support/until';

let s: Served;
beforeAll(async () => {
  s = await served('leases');
});
afterAll(async () => {
  const internal = await s.t.raw.keys(`#svc:*{${s.t.prefix}*`);
  if (internal.length) await s.t.raw.del(...internal);
  await s.close();
});

const api = () => request(s.t.data);
const post = (path: string, body: object = {}) =>
  api().post(path).set('Content-Type', 'application/json').send(body);
const lockStatus = async (name: string) => (await api().get(`/store/locks/${name}`)).body;

test('when a lock is acquired under a lease, then keep-alives renew it and a revoke releases it', async () => {
  const lease = (await post('/store/leases', { ttl_ms: 1000 })).body;
  expect(lease).toMatchObject({ ttl_ms: 1000, locks: [] });
  expect(lease.lease).toMatch(/^[0-9a-f]{32}$/);
  const lock = await post('/store/locks/lease:a/acquire', { lease: lease.lease });
  expect(lock.body).toMatchObject({ acquired: true, lease: lease.lease });
  expect(lock.body.ttl_ms).toBeLessThanOrEqual(1000);
  const kept = await post(`/store/leases/${lease.lease}/keepalive`);
  expect(kept.body).toMatchObject({ lease: lease.lease, ttl_ms: 1000, locks: ['lease:a'] });
  expect((await api().get(`/store/leases/${lease.lease}`)).body.locks).toEqual(['lease:a']);
  const revoked = await api().delete(`/store/leases/${lease.lease}`);
  expect(revoked.body).toEqual({ revoked: true, locks_released: 1 });
  expect((await lockStatus('lease:a')).held).toBe(false);
  expect((await post(`/store/leases/${lease.lease}/keepalive`)).status).toBe(404);
  expect((await post('/store/locks/lease:b/acquire', { lease: lease.lease })).status).toBe(404);
});

test('when nobody keeps a lease alive, then it and its locks end with its TTL', async () => {
  const lease = (await post('/store/leases', { ttl_ms: 200 })).body;
  await post('/store/locks/lease:c/acquire', { lease: lease.lease });
  await until(async () => (await lockStatus('lease:c')).held === false);
  expect((await api().get(`/store/leases/${lease.lease}`)).status).toBe(404);
});

test('when a keep-alive stream is open, then the lease outlives its TTL; when the stream is lost, it ends after the grace period', async () => {
  const lease = (await post('/store/leases', { ttl_ms: 300 })).body;
  await post('/store/locks/lease:d/acquire', { lease: lease.lease });
  const events: string[] = [];
  const req = http.get(`${s.base}/store/leases/${lease.lease}/keepalive?grace_ms=200`, (res) => {
    res.on('data', (c: Buffer) => events.push(...(c.toString().match(/^event: \w+/gm) ?? [])));
  });
  // Several TTLs pass with the stream open: the lock stays held.
  await until(() => events.length >= 6);
  expect((await lockStatus('lease:d')).held).toBe(true);
  expect(events.every((e) => e === 'event: keepalive')).toBe(true);
  req.destroy();
  await until(async () => (await lockStatus('lease:d')).held === false);
  await until(async () => (await api().get(`/store/leases/${lease.lease}`)).status === 404);
});

test('when a keep-alive WebSocket is open, then the lease outlives its TTL; when it is lost, the lease ends after the grace period', async () => {
  const lease = (await post('/store/leases', { ttl_ms: 300 })).body;
  await post('/store/locks/lease:f/acquire', { lease: lease.lease });
  const ws = new WebSocket(
    `${s.base.replace('http', 'ws')}/store/leases/${lease.lease}/keepalive/ws?grace_ms=200`,
  );
  const messages: { kind: string; lease: string }[] = [];
  ws.on('message', (data) => messages.push(JSON.parse(String(data))));
  ws.on('error', () => {});
  await until(() => messages.length >= 6);
  expect((await lockStatus('lease:f')).held).toBe(true);
  expect(messages.every((m) => m.kind === 'keepalive' && m.lease === lease.lease)).toBe(true);
  ws.terminate();
  await until(async () => (await lockStatus('lease:f')).held === false);
  await until(async () => (await api().get(`/store/leases/${lease.lease}`)).status === 404);
});

test('when a keep-alive WebSocket is asked without Upgrade or for a lease that is gone, then the usual JSON errors', async () => {
  expect((await api().get(`/store/leases/${'0'.repeat(32)}/keepalive/ws`)).body.error).toBe(
    'invalid_request',
  );
  const refused = new WebSocket(
    `${s.base.replace('http', 'ws')}/store/leases/${'0'.repeat(32)}/keepalive/ws`,
  );
  const status = await new Promise<number>((resolve) => {
    refused.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    refused.on('error', () => resolve(0));
  });
  expect(status).toBe(404);
});

test('when a lease id is malformed or an acquire has neither ttl_ms nor lease, then 400', async () => {
  expect((await post('/store/leases/nope/keepalive')).body.error).toBe('invalid_request');
  expect((await post('/store/locks/lease:e/acquire', {})).body.error).toBe('invalid_ttl');
});
