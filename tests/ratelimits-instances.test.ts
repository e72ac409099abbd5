// Rate-limit decisions shared by three service processes: however the checks are spread and interleaved, no
// policy allows more than its limit in one window.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import Redis from 'ioredis';
import { freePort } from './support/redis-server';
import { killServices, startService } from './support/service-process';
import { until } from './support/until';

jest.setTimeout(120_000);
afterAll(killServices);

const PREFIX = `t:rl-instances:${randomBytes(3).toString('hex')}:`;
const LIMIT = 40;
const CHECKS = 240;
let ports: number[] = [];

beforeAll(async () => {
  ports = await Promise.all([freePort(), freePort(), freePort()]);
  const services = ports.map((port) =>
    startService({
      SVC_REDIS_URL: process.env.REDIS_URL as string,
      SVC_KEY_PREFIX: PREFIX,
      SVC_RATE_LIMIT_ENABLED: 'false',
      SVC_PORT: String(port),
    }),
  );
  await until(() => services.every((s) => /listening/.test(s.output())), 60_000);
});

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
afterAll(async () => {
  agent.destroy();
  const raw = new Redis(process.env.REDIS_URL as string);
  const keys = await raw.keys(`#svc:quota:{${PREFIX}*`);
  if (keys.length) await raw.del(...keys);
  raw.disconnect();
});

function post(
  port: number,
  path: string,
  body: object,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => {
          text += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

// One window for the whole run (a period of 23 days, aligned on Redis's clock), so the expected count is exact.
const POLICIES = {
  fixed_window: { algorithm: 'fixed_window', limit: LIMIT, period_ms: 2_000_000_000 },
  sliding_window: { algorithm: 'sliding_window', limit: LIMIT, period_ms: 2_000_000_000 },
  token_bucket: { algorithm: 'token_bucket', limit: 1, period_ms: 2_000_000_000, burst: LIMIT },
};

test.each(Object.keys(POLICIES))(
  'when %s checks are spread over 3 processes at once, then exactly its limit is allowed and no more',
  async (algorithm) => {
    const name = `rl:${algorithm}`;
    const defined = await post(
      ports[0] as number,
      `/store/ratelimits/${name}`,
      POLICIES[algorithm as keyof typeof POLICIES],
    );
    expect(defined.status).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: CHECKS }, (_, i) =>
        post(ports[i % 3] as number, `/store/ratelimits/${name}/check`, {
          identifiers: ['user:1', `ip:${i % 5}`],
        }),
      ),
    );
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    expect(answers.filter((a) => a.body.allowed === true)).toHaveLength(LIMIT);
    const peek = await post(ports[2] as number, `/store/ratelimits/${name}/peek`, { identifier: 'user:1' });
    expect(peek.body).toMatchObject({ allowed: false, remaining: 0 });
  },
);
