// Raw bytes for strings: PUT with application/octet-stream stores the body as is; GET with Accept answers the bytes.
import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('raw-strings', { SVC_MAX_VALUE_BYTES: '65536' });
});
afterAll(() => t.close());

const api = () => request(t.data);
const raw = (key: string) => `${t.prefix}${key}`;
const put = (key: string, body: Buffer) =>
  api().put(`/store/string/${key}`).set('Content-Type', 'application/octet-stream').send(body);
/** Reads a response body as bytes. */
const bytes = (req: request.Test) =>
  req.buffer(true).parse((res, done) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => done(null, Buffer.concat(chunks)));
  });

test('when a gzip file is PUT, then Redis holds its bytes and a GET with Accept answers them with the ETag', async () => {
  const file = gzipSync(Buffer.from('{"hello":"world"}'.repeat(100)));
  const created = await put('r-gz', file).expect(201);
  expect(created.body).toEqual({ success: true, key: 'r-gz' });
  expect((await t.raw.getBuffer(raw('r-gz')))?.equals(file)).toBe(true);
  const res = await bytes(api().get('/store/string/r-gz').set('Accept', 'application/octet-stream')).expect(
    200,
  );
  expect(res.headers['content-type']).toBe('application/octet-stream');
  expect(Number(res.headers['content-length'])).toBe(file.length);
  expect(res.headers.etag).toBe(created.headers.etag);
  expect(gunzipSync(res.body as Buffer).toString()).toContain('"hello"');
  const again = await api()
    .get('/store/string/r-gz')
    .set('Accept', 'application/octet-stream')
    .set('If-None-Match', res.headers.etag as string);
  expect(again.status).toBe(304);
});

test('when every byte value is PUT with a ttl, then it round-trips and expires; a second PUT is 200', async () => {
  const body = Buffer.concat([Buffer.from([...Array(256).keys()]), randomBytes(1000)]);
  await put('r-all', body).query({ ttl: 60 }).expect(201);
  expect(await t.raw.ttl(raw('r-all'))).toBe(60);
  await put('r-all', body).expect(200);
  const res = await bytes(api().get('/store/string/r-all').set('Accept', 'application/octet-stream')).expect(
    200,
  );
  expect((res.body as Buffer).equals(body)).toBe(true);
  expect((await api().get('/store/string/r-all').expect(422)).body.error).toBe('binary_value');
});

test('when If-None-Match: * and the key exists, then 409 key_exists and nothing is written', async () => {
  await put('r-once', Buffer.from('first')).set('If-None-Match', '*').expect(201);
  const res = await put('r-once', Buffer.from('second')).set('If-None-Match', '*');
  expect(res.status).toBe(409);
  expect(await t.raw.get(raw('r-once'))).toBe('first');
});

test('when the body is larger than SVC_MAX_VALUE_BYTES, then 413 and nothing is written', async () => {
  const res = await put('r-big', Buffer.alloc(65537, 1));
  expect(res.status).toBe(413);
  expect(res.body.error).toBe('payload_too_large');
  expect(await t.raw.exists(raw('r-big'))).toBe(0);
});

test('when the Content-Type is JSON, then 415 unsupported_media_type', async () => {
  const res = await api().put('/store/string/r-json').send({ value: 'x' });
  expect(res.status).toBe(415);
  expect(await t.raw.exists(raw('r-json'))).toBe(0);
});

test('when a PUT is retried with the same Idempotency-Key, then the replay answers and nothing changes', async () => {
  const key = `raw-${Date.now()}`;
  await put('r-idem', Buffer.from('v1')).set('Idempotency-Key', key).expect(201);
  await t.raw.set(raw('r-idem'), 'changed meanwhile');
  const retry = await put('r-idem', Buffer.from('v1')).set('Idempotency-Key', key).expect(201);
  expect(retry.headers['idempotent-replayed']).toBe('true');
  expect(await t.raw.get(raw('r-idem'))).toBe('changed meanwhile');
  await t.raw.del(...(await t.raw.keys('#svc:idem:*')));
});
