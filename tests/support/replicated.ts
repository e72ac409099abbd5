// A service whose writes one replica must confirm (SVC_REDIS_WAIT_REPLICAS=1): a primary, its replica, and the app.
import { type TestApp, testApp } from './app';
import { LOOPBACK, type RedisServer, startRedisServer } from './redis-server';

export interface Replicated {
  primary: RedisServer;
  replica: RedisServer;
  t: TestApp;
}

export async function replicatedApp(name: string): Promise<Replicated> {
  const primary = await startRedisServer();
  const replica = await startRedisServer({ args: ['--replicaof', LOOPBACK, String(primary.port)] });
  const t = await testApp(name, {
    SVC_REDIS_URL: primary.url,
    SVC_REDIS_WAIT_REPLICAS: '1',
    SVC_REDIS_WAIT_TIMEOUT_MS: '1000',
  });
  return { primary, replica, t };
}
