// Jest globalTeardown: stops the Redis that globalSetup started, if any, and removes the tests' Redis data dirs.
import { rmSync } from 'node:fs';
import { killServersUnder } from './redis-server';

export default async function globalTeardown(): Promise<void> {
  const handle = globalThis.__TEST_REDIS__;
  globalThis.__TEST_REDIS__ = undefined;
  if (!handle) return;
  try {
    if (handle.stop) {
      await handle.stop();
      delete process.env.REDIS_URL;
      delete process.env.TEST_REDIS_SPAWNED;
    }
  } finally {
    killServersUnder(handle.tmpRoot);
    rmSync(handle.tmpRoot, { recursive: true, force: true });
  }
}
