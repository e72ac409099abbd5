// Jest globalSetup: picks the Redis the tests use (REDIS_URL, else a spawned redis-server, else Docker) and exports it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hasRedisServer, startRedisServer } from './redis-server';

/** What the teardown needs; jest runs globalSetup and globalTeardown in the same process. */
export interface TestRedisHandle {
  tmpRoot: string;
  /** Set when the harness owns the server: stops it and forgets its REDIS_URL (watch mode runs setup again). */
  stop?: () => Promise<void>;
}

declare global {
  var __TEST_REDIS__: TestRedisHandle | undefined;
}

const NO_REDIS = `No Redis for the tests. Any one of these works:
  - set REDIS_URL to a Redis the tests may write to (they use keys under "t:" prefixes and remove them),
    e.g. REDIS_URL=redis://127.0.0.1:6379 npm test
  - install redis-server, and the tests start their own: apt-get install -y redis-server (Debian/Ubuntu),
    brew install redis (macOS)
  - run a Docker engine, and the tests start redis:7-alpine through testcontainers`;

async function startContainer(): Promise<{ url: string; stop: () => Promise<void> } | undefined> {
  const { GenericContainer, Wait, getContainerRuntimeClient } = await import('testcontainers');
  try {
    await getContainerRuntimeClient();
  } catch {
    return undefined; // no Docker engine answers
  }
  const container = await new GenericContainer('redis:7-alpine')
    .withExposedPorts(6379)
    .withWaitStrategy(Wait.forLogMessage('Ready to accept connections'))
    .start();
  // Says which branch ran (npm run test:containers runs the suite's subset on this one).
  console.log(
    `tests: Redis from testcontainers (redis:7-alpine), container ${container.getId().slice(0, 12)}`,
  );
  return {
    url: `redis://${container.getHost()}:${container.getMappedPort(6379)}`,
    stop: async () => {
      await container.stop(); // docker stop: SIGTERM, then waits for the exit
    },
  };
}

/** The console the service serves at /console (dist/console), as `npm run build` makes it: its tests drive it. */
function buildConsole(): void {
  const script = path.join(__dirname, '..', '..', 'scripts', 'build-console.mjs');
  execFileSync(process.execPath, [script], { stdio: 'inherit' });
}

export default async function globalSetup(): Promise<void> {
  buildConsole();
  // Servers that tests start themselves (outage, Sentinel, Cluster) keep their data dirs here.
  const tmpRoot = mkdtempSync(path.join(os.tmpdir(), 'redis-tests-'));
  process.env.TEST_REDIS_TMPDIR = tmpRoot;
  globalThis.__TEST_REDIS__ = { tmpRoot };

  if (process.env.REDIS_URL) {
    delete process.env.TEST_REDIS_SPAWNED;
    return;
  }
  let owned: { url: string; stop: () => Promise<void> } | undefined;
  try {
    owned = hasRedisServer() ? await startRedisServer() : await startContainer();
  } catch (err) {
    rmSync(tmpRoot, { recursive: true, force: true });
    throw err;
  }
  if (!owned) {
    rmSync(tmpRoot, { recursive: true, force: true });
    throw new Error(NO_REDIS);
  }
  globalThis.__TEST_REDIS__.stop = owned.stop;
  process.env.REDIS_URL = owned.url;
  process.env.TEST_REDIS_SPAWNED = '1';
}
