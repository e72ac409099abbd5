// The unmodified @upstash/ratelimit on @upstash/redis through /upstash: its Lua scripts run for a `write` credential
// when SVC_UPSTASH_SCRIPT_PERMISSION=write, and are refused otherwise.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ratelimit } from '@upstash/ratelimit';
import { Redis } from '@upstash/redis';
import { type TestApp, testApp } from './support/app';
import { apiKey } from './support/auth';

const writer = apiKey('rl-writer', ['read', 'write']);

async function serve(env: Record<string, string>): Promise<{ t: TestApp; server: Server; redis: Redis }> {
  const t = await testApp('upstash-ratelimit', { SVC_API_KEYS: JSON.stringify({ keys: [writer] }), ...env });
  const server = t.data.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/upstash`;
  return { t, server, redis: new Redis({ url, token: writer.key, retry: false }) };
}

async function stop({ t, server }: { t: TestApp; server: Server }): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await t.close();
}

test('when scripts need write, then a sliding window limits the third call of two allowed', async () => {
  const s = await serve({ SVC_UPSTASH_SCRIPT_PERMISSION: 'write' });
  try {
    const ratelimit = new Ratelimit({
      redis: s.redis,
      limiter: Ratelimit.slidingWindow(2, '30 s'),
      prefix: 'rl',
    });
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push((await ratelimit.limit('user-42')).success);
    expect(outcomes).toEqual([true, true, false]);
    expect((await ratelimit.limit('user-43')).success).toBe(true);
  } finally {
    await stop(s);
  }
});

test('when scripts need admin (the default), then a write credential is refused', async () => {
  const s = await serve({});
  try {
    const ratelimit = new Ratelimit({
      redis: s.redis,
      limiter: Ratelimit.fixedWindow(2, '30 s'),
      prefix: 'rl',
    });
    await expect(ratelimit.limit('user-42')).rejects.toThrow(/admin/);
  } finally {
    await stop(s);
  }
});
