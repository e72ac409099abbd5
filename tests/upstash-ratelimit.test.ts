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

describe("each of @upstash/ratelimit's algorithms, unmodified, through /upstash with an unprefixed key", () => {
  const algorithms = {
    fixedWindow: () => Ratelimit.fixedWindow(3, '1000000 s'),
    slidingWindow: () => Ratelimit.slidingWindow(3, '1000000 s'),
    tokenBucket: () => Ratelimit.tokenBucket(1, '1000000 s', 3),
  };
  test.each(Object.keys(algorithms))(
    'when %s is used up, then the next call is refused, getRemaining reads without spending and resetUsedTokens gives the quota back',
    async (name) => {
      const s = await serve({ SVC_UPSTASH_SCRIPT_PERMISSION: 'write' });
      try {
        const limiter = algorithms[name as keyof typeof algorithms]();
        const ratelimit = new Ratelimit({ redis: s.redis, limiter, prefix: `rl-${name}` });
        const outcomes = [];
        for (let i = 0; i < 4; i++) outcomes.push(await ratelimit.limit('user-1'));
        expect(outcomes.map((o) => o.success)).toEqual([true, true, true, false]);
        expect(outcomes.map((o) => o.remaining)).toEqual([2, 1, 0, 0]);
        expect(outcomes[3]?.reset).toBeGreaterThan(Date.now());
        expect((await ratelimit.getRemaining('user-1')).remaining).toBe(0);
        expect((await ratelimit.getRemaining('user-2')).remaining).toBe(3);
        expect((await ratelimit.getRemaining('user-2')).remaining).toBe(3);
        await ratelimit.resetUsedTokens('user-1');
        expect((await ratelimit.limit('user-1')).success).toBe(true);
        // Cost: a call worth 2 tokens on a fresh identifier leaves 1.
        expect((await ratelimit.limit('user-3', { rate: 2 })).remaining).toBe(1);
      } finally {
        await stop(s);
      }
    },
  );
});
