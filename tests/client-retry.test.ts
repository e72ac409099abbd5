// The TypeScript client's retries against a rate-limited service: reads ride through a 429 after its Retry-After;
// writes only with an Idempotency-Key.
import { createGateway, delayFor, GatewayError, repeatable } from '../clients/typescript/src/index';
import { type Served, served } from './support/served';

let s: Served;
const CLIENT_ADDRESS = '198.51.100.24';
beforeAll(async () => {
  // Rate-limit counters are shared by every service on a Redis (that is their point), whatever its key prefix:
  // this file's client comes from an address of its own, so that other test files' requests never count for it.
  s = await served('client-retry', {
    SVC_RATE_LIMIT_ENABLED: 'true',
    SVC_RATE_LIMIT_REQUESTS: '2',
    SVC_RATE_LIMIT_WINDOW: '1',
    SVC_TRUST_PROXY: 'true',
  });
});
afterAll(() => s.close());

/** A client whose fetch records each attempt's method, status and Idempotency-Key. */
function recorded() {
  const attempts: { method: string; status: number; key: string | null }[] = [];
  const gw = createGateway({
    baseUrl: s.base,
    retry: { retries: 5, maxDelayMs: 3000 },
    fetch: async (input, init) => {
      const request = new Request(input, init);
      request.headers.set('X-Forwarded-For', CLIENT_ADDRESS);
      const response = await fetch(request);
      attempts.push({
        method: request.method,
        status: response.status,
        key: request.headers.get('Idempotency-Key'),
      });
      return response;
    },
  });
  return { gw, attempts };
}

/** Spends the window's budget, so that the next request is a 429. */
async function exhaust(gw: ReturnType<typeof recorded>['gw']) {
  for (let i = 0; i < 10; i++) {
    const err = await gw.strings.set('spend', 'x').catch((e: unknown) => e);
    if (err instanceof GatewayError && err.status === 429) return err;
  }
  throw new Error('no 429 within 10 writes');
}

test('when a read meets 429, then it is sent again after Retry-After and succeeds', async () => {
  const { gw, attempts } = recorded();
  await exhaust(gw);
  attempts.length = 0;
  expect(await gw.strings.get('spend')).toMatchObject({ value: 'x' });
  expect(attempts[0]?.status).toBe(429);
  expect(attempts.at(-1)?.status).toBe(200);
});

test('when a write without an Idempotency-Key meets 429, then it is not repeated: the error carries retry_after', async () => {
  const { gw, attempts } = recorded();
  const err = await exhaust(gw);
  expect(err).toMatchObject({ error: 'rate_limit_exceeded', status: 429 });
  expect(err.retryAfter).toEqual(expect.any(Number));
  expect(attempts.filter((a) => a.status === 429)).toHaveLength(1);
});

test("when a write asks for retry: 'idempotent', then it carries one Idempotency-Key on every attempt", async () => {
  const { gw, attempts } = recorded();
  await exhaust(gw);
  attempts.length = 0;
  await gw.strings.set('spend', 'y', { retry: 'idempotent' });
  expect(attempts[0]?.status).toBe(429);
  expect(attempts.at(-1)?.status).toBe(200);
  const keys = new Set(attempts.map((a) => a.key));
  expect(keys.size).toBe(1);
  expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/);
});

describe('the retry policy', () => {
  test('reads repeat; writes only with an Idempotency-Key', () => {
    expect(repeatable(new Request('http://h/store/string/k'))).toBe(true);
    expect(repeatable(new Request('http://h/store/string/k', { method: 'POST' }))).toBe(false);
    const keyed = new Request('http://h/store/string/k', {
      method: 'POST',
      headers: { 'Idempotency-Key': 'k1' },
    });
    expect(repeatable(keyed)).toBe(true);
  });

  test('Retry-After wins over the backoff, capped by maxDelayMs', () => {
    const opts = { retries: 3, baseDelayMs: 100, maxDelayMs: 5000 };
    expect(delayFor(1, new Response(null, { status: 429, headers: { 'Retry-After': '2' } }), opts)).toBe(
      2000,
    );
    expect(delayFor(1, new Response(null, { status: 503, headers: { 'Retry-After': '60' } }), opts)).toBe(
      5000,
    );
    const backoff = delayFor(3, new Response(null, { status: 503 }), opts);
    expect(backoff).toBeGreaterThanOrEqual(200);
    expect(backoff).toBeLessThanOrEqual(400);
  });
});
