// The spec's own requests, as written: every endpoint of the specification from a plain HTTP client that sends only
// the headers the spec names (Content-Type: application/json with a JSON body, Authorization with credentials;
// no Content-Type on bodiless POSTs such as `curl -X POST .../store/set/tags/pop`), in protected mode and with keys.
import { apiKey, bearer } from './support/auth';
import { plain } from './support/plain-http';
import { type Served, served } from './support/served';

const admin = apiKey('spec-admin', ['read', 'write', 'admin']);
const JSON_TYPE = { 'Content-Type': 'application/json' };

/** [method, path, body]: the endpoints of the specification, in an order where each finds what it needs. */
const SPEC: [string, string, unknown?][] = [
  ['POST', '/store/string/greeting', { value: 'hello', ttl: 300 }],
  ['GET', '/store/string/greeting'],
  ['GET', '/store/string/greeting/exists'],
  ['GET', '/store/string/greeting/ttl'],
  ['POST', '/store/string/greeting/expire', { ttl: 600 }],
  ['POST', '/store/string/batch', { operations: [{ type: 'get', key: 'greeting' }] }],
  ['DELETE', '/store/string/greeting'],
  ['POST', '/store/hash/user', { fields: { name: 'Ada', lang: 'en' } }],
  ['GET', '/store/hash/user'],
  ['GET', '/store/hash/user/field/name'],
  ['POST', '/store/hash/user/field/city', { value: 'London' }],
  ['DELETE', '/store/hash/user/field/lang'],
  ['GET', '/store/hash/user/exists'],
  ['GET', '/store/hash/user/keys'],
  ['GET', '/store/hash/user/values'],
  ['POST', '/store/hash/batch', { operations: [{ type: 'getField', key: 'user', field: 'name' }] }],
  ['DELETE', '/store/hash/user'],
  ['POST', '/store/set/tags', { members: ['redis', 'http'] }],
  ['POST', '/store/set/other', { members: ['http', 'json'] }],
  ['GET', '/store/set/tags'],
  ['POST', '/store/set/tags/member/go'],
  ['GET', '/store/set/tags/member/go/exists'],
  ['DELETE', '/store/set/tags/member/go'],
  ['GET', '/store/set/tags/cardinality'],
  ['POST', '/store/set/union', { keys: ['tags', 'other'] }],
  ['POST', '/store/set/intersection', { keys: ['tags', 'other'] }],
  ['POST', '/store/set/difference', { keys: ['tags', 'other'] }],
  ['POST', '/store/set/batch', { operations: [{ type: 'cardinality', key: 'tags' }] }],
  ['POST', '/store/set/tags/pop'],
  ['DELETE', '/store/set/tags'],
  ['GET', '/store/admin/ping'],
  ['GET', '/store/admin/health'],
  ['GET', '/store/admin/info'],
  ['GET', '/store/admin/clients'],
  ['GET', '/store/admin/memory/other'],
  ['GET', '/store/admin/stats'],
  ['GET', '/store/admin/metrics'],
  ['POST', '/store/admin/flush'],
  ['POST', '/store/admin/reload'],
];

const modes: [string, Record<string, string>, Record<string, string>][] = [
  ['protected mode (no credentials, loopback)', { SVC_PROTECTED_MODE: 'true' }, {}],
  [
    'an API key',
    { SVC_API_KEYS: JSON.stringify({ keys: [admin] }), SVC_METRICS_ENABLED: 'true' },
    { Authorization: bearer(admin) },
  ],
];

describe.each(modes)('the spec’s requests in %s', (name, env, credentials) => {
  let s: Served;
  let port: number;
  beforeAll(async () => {
    s = await served(`spec-${name.split(' ')[0]}`, { SVC_METRICS_ENABLED: 'true', ...env });
    port = Number(new URL(s.base).port);
  });
  afterAll(() => s.close());

  test('when each is sent with only the headers the spec names, then each succeeds', async () => {
    const answers: string[] = [];
    for (const [method, path, body] of SPEC) {
      const headers = body === undefined ? credentials : { ...credentials, ...JSON_TYPE };
      const res = await plain(
        port,
        method,
        path,
        headers,
        body === undefined ? undefined : JSON.stringify(body),
      );
      answers.push(`${method} ${path} ${res.status}${res.status >= 300 ? ` ${res.body}` : ''}`);
    }
    expect(answers).toEqual(
      SPEC.map(([method, path]) => expect.stringMatching(`^${method} ${path} 20[01]$`)),
    );
  });

  test('when the set pop and the member add are sent bare, then they change the set', async () => {
    await plain(port, 'POST', '/store/set/bare', { ...credentials, ...JSON_TYPE }, '{"members":["a"]}');
    const added = await plain(port, 'POST', '/store/set/bare/member/go', credentials);
    expect([added.status, JSON.parse(added.body)]).toEqual([
      201,
      { success: true, member: 'go', added: true },
    ]);
    const popped = await plain(port, 'POST', '/store/set/bare/pop', credentials);
    expect(popped.status).toBe(200);
    expect(await s.t.raw.scard(`${s.t.prefix}bare`)).toBe(1);
    const flushed = await plain(port, 'POST', '/store/admin/flush', credentials);
    expect(flushed.status).toBe(200);
    expect(await s.t.raw.exists(`${s.t.prefix}bare`)).toBe(0);
  });
});
