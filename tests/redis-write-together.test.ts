// The data connection's own pipelining (writeTogether, src/redis/client.ts): the commands of one turn of the event
// loop leave in one write, their replies come back to the right callers, and a later turn writes again.

import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { loadConfig } from '../src/config';
import { createRedis, type RedisClient } from '../src/redis/client';

const prefix = `wt:${randomUUID()}:`;
let redis: RedisClient;
let socket: Socket;

beforeAll(async () => {
  redis = createRedis(loadConfig({ SVC_REDIS_URL: process.env.REDIS_URL }));
  await redis.connect();
  socket = (redis as unknown as { stream: Socket }).stream;
});

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

/** Counts the socket's writes while `run` runs. */
async function writesDuring(run: () => Promise<unknown>): Promise<number> {
  // Node's stream internals: `_writev` for several buffered chunks, `_write` for one.
  const internals = socket as unknown as Record<'_write' | '_writev', (...args: unknown[]) => void>;
  const writev = jest.spyOn(internals, '_writev');
  const write = jest.spyOn(internals, '_write');
  try {
    await run();
    return writev.mock.calls.length + write.mock.calls.length;
  } finally {
    writev.mockRestore();
    write.mockRestore();
  }
}

test('when one turn sends many commands, then they leave in one write and each caller gets its own reply', async () => {
  let replies: unknown[] = [];
  const writes = await writesDuring(async () => {
    const sent: Promise<unknown>[] = [];
    for (let i = 0; i < 50; i++) {
      sent.push(redis.set(`${prefix}${i}`, `v${i}`));
      sent.push(redis.get(`${prefix}${i}`));
      sent.push(redis.typedRead(`${prefix}${i}`, 'string', 'GET'));
    }
    replies = await Promise.all(sent);
  });
  expect(writes).toBe(1);
  for (let i = 0; i < 50; i++) {
    expect(replies[3 * i]).toBe('OK');
    expect(replies[3 * i + 1]).toBe(`v${i}`);
    expect(replies[3 * i + 2]).toEqual([`v${i}`, -1]);
  }
});

test('when commands are sent in two turns, then each turn has its write', async () => {
  const writes = await writesDuring(async () => {
    const first = redis.get(`${prefix}0`);
    await new Promise((resolve) => setImmediate(resolve));
    const second = redis.get(`${prefix}1`);
    expect(await Promise.all([first, second])).toEqual(['v0', 'v1']);
  });
  expect(writes).toBe(2);
});

test('when a command fails, then the others of its turn still get their replies', async () => {
  await redis.set(`${prefix}text`, 'not a number');
  const [bad, good] = await Promise.allSettled([redis.incr(`${prefix}text`), redis.get(`${prefix}0`)]);
  expect(bad.status).toBe('rejected');
  expect(good).toEqual({ status: 'fulfilled', value: 'v0' });
});
