// Cross-cutting HTTP behaviour: request ids, the error body, 404/405, body limits and media types.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('http', { SVC_MAX_BODY_BYTES: '1024' });
});
afterAll(() => t.close());
const api = () => request(t.data);

describe('request ids', () => {
  test('when the client sends a safe X-Request-ID, then it is echoed', async () => {
    const res = await api().get('/store/string/x/exists').set('X-Request-ID', 'abc-123.x:y_z');
    expect(res.headers['x-request-id']).toBe('abc-123.x:y_z');
  });

  test('when the client sends an unsafe one, then a new UUID replaces it', async () => {
    const res = await api().get('/store/string/x/exists').set('X-Request-ID', 'bad id <script>');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('when an error is answered, then its body carries the same request id', async () => {
    const res = await api().get('/store/string/missing-key');
    expect(res.body.request_id).toBe(res.headers['x-request-id']);
  });

  test('when SVC_REQUEST_ID_HEADER is set, then that header is used', async () => {
    const other = await testApp('http-rid', { SVC_REQUEST_ID_HEADER: 'X-Correlation-ID' });
    try {
      const res = await request(other.data).get('/store/string/x/exists').set('X-Correlation-ID', 'corr-1');
      expect(res.headers['x-correlation-id']).toBe('corr-1');
    } finally {
      await other.close();
    }
  });
});

describe('the error body', () => {
  test('has error, message, status, timestamp and request_id', async () => {
    const res = await api().get('/store/string/missing-key');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      error: 'not_found',
      message: expect.stringContaining('missing-key'),
      status: 404,
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      request_id: expect.any(String),
    });
  });

  test('when SVC_ERROR_DETAILS is on, validation errors carry details', async () => {
    const res = await api().post('/store/string/k').send({ value: 'v', ttl: 0 });
    expect(res.body.details).toMatchObject({ path: '/body/ttl' });
  });

  test('when SVC_ERROR_DETAILS=false, there are no details', async () => {
    const quiet = await testApp('http-quiet', { SVC_ERROR_DETAILS: 'false' });
    try {
      const res = await request(quiet.data).post('/store/string/k').send({ value: 'v', ttl: 0 });
      expect(res.body.error).toBe('invalid_ttl');
      expect(res.body.details).toBeUndefined();
    } finally {
      await quiet.close();
    }
  });
});

describe('unknown paths and methods', () => {
  test('an unknown path is 404 unknown_endpoint', async () => {
    const res = await api().get('/store/nothing/here');
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('unknown_endpoint');
  });

  // OPTIONS is no exception: the same 405 in the JSON error format, with Allow.
  test.each(['patch', 'options'] as const)(
    'a known path with another method (%s) is 405 with Allow',
    async (method) => {
      const res = await api()[method]('/store/string/some-key');
      expect(res.status).toBe(405);
      expect(res.body.error).toBe('method_not_allowed');
      expect(res.headers.allow).toBe('GET, POST, PUT, DELETE, HEAD');
    },
  );

  test('405 works under /api too', async () => {
    const res = await api().patch('/api/string/some-key/ttl');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toContain('DELETE');
  });
});

describe('request bodies', () => {
  const postRaw = (body: string) =>
    api().post('/store/string/k').set('Content-Type', 'application/json').send(body);

  test.each([
    ['{"value": "v",}', 'Malformed JSON at position 14: Expected double-quoted property name'],
    ['{"value": ', 'Malformed JSON: Unexpected end of JSON input'],
    [
      '{"value": "v"} trailing',
      'Malformed JSON at position 15: Unexpected non-whitespace character after JSON',
    ],
  ])(
    'when the body is malformed JSON (%s), then 400 invalid_value names the position',
    async (body, message) => {
      const res = await postRaw(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_value');
      expect(res.body.message).toBe(message);
    },
  );

  test('when the body is not JSON at all, then the message quotes none of it', async () => {
    const res = await postRaw('password=hunter2');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_value');
    expect(res.body.message).toMatch(/^Malformed JSON/);
    expect(res.body.message).not.toContain('hunter2');
  });

  test('a JSON body that is not an object is 400 invalid_request naming what it is, as the contract says', async () => {
    const res = await postRaw('"text"');
    expect([res.status, res.body.error]).toEqual([400, 'invalid_request']);
    expect(res.body.message).toBe('Request body must be a JSON object, not string');
    expect((await postRaw('null')).body.message).toBe('Request body must be a JSON object, not null');
    for (const body of ['5', 'true', '[1]']) expect((await postRaw(body)).body.error).toBe('invalid_request');
  });

  test('a body that is not JSON is 415 unsupported_media_type', async () => {
    const res = await api().post('/store/string/k').set('Content-Type', 'text/plain').send('value=1');
    expect(res.status).toBe(415);
    expect(res.body.error).toBe('unsupported_media_type');
  });

  test('no body at all is 400 naming the missing body', async () => {
    const res = await api().post('/store/string/k');
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/body/i);
  });

  test('a body over SVC_MAX_BODY_BYTES is 413 payload_too_large', async () => {
    const res = await api()
      .post('/store/string/k')
      .send({ value: 'x'.repeat(2000) });
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('payload_too_large');
    expect(await t.raw.exists(`${t.prefix}k`)).toBe(0);
  });
});

describe('malformed requests are client errors, never 500', () => {
  test('a path parameter that is not valid percent-encoding is 400', async () => {
    const res = await api().get('/store/string/%E0%A4%A');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  test('a body that does not match its Content-Encoding is 400', async () => {
    const res = await api()
      .post('/store/string/k')
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .send('{"value":"v"}');
    expect(res.status).toBe(400);
    expect(await t.raw.exists(`${t.prefix}k`)).toBe(0);
  });

  test('a JSON body of null is 400 saying an object is expected', async () => {
    const res = await api().post('/store/string/k').set('Content-Type', 'application/json').send('null');
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/JSON object/);
  });
});
