// The composition root: createService builds every connection from the config and close() releases them all.
import { loadConfig } from '../src/config';
import { createLogger } from '../src/observability/logger';
import { createService } from '../src/service';
import { contract } from './support/app';

const build = (env: Record<string, string> = {}) => {
  const config = loadConfig({
    SVC_REDIS_URL: process.env.REDIS_URL,
    SVC_PROTECTED_MODE: 'false',
    SVC_RATE_LIMIT_ENABLED: 'false',
    ...env,
  });
  return createService(config, { logger: createLogger(config.log, true), contract: contract() });
};

test('when the service is closed, then every connection it made has ended, and a second close is harmless', async () => {
  const service = build({ SVC_REDIS_WAIT_REPLICAS: '1' });
  await service.connect({ waitForLimiter: true });
  const connections = [service.redis, service.limiterRedis, service.writerRedis];
  expect(connections.map((c) => c?.status)).toEqual(['ready', 'ready', 'ready']);
  await service.close();
  await service.close();
  expect(connections.map((c) => c?.status)).toEqual(['end', 'end', 'end']);
});

test('when no replica wait is configured, then there is no writer connection', async () => {
  const service = build();
  try {
    expect(service.writerRedis).toBeUndefined();
  } finally {
    await service.close();
  }
});

test('when Redis is not reachable, then connect rejects and close still resolves', async () => {
  const service = build({ SVC_REDIS_URL: 'redis://127.0.0.1:1', SVC_REDIS_CONNECT_TIMEOUT_MS: '200' });
  await expect(service.connect()).rejects.toThrow();
  await expect(service.close()).resolves.toBeUndefined();
  // A client stopped while reconnecting stays 'reconnecting' in ioredis, but tries no more.
  const status = service.redis.status;
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(service.redis.status).toBe(status);
});

test('when the context is built, then reload, its hooks and the auth probe are there from the start', () => {
  const service = build();
  try {
    expect(typeof service.context.reload).toBe('function');
    expect(service.context.onReload).toHaveLength(1);
    expect(service.context.authConfigured()).toBe(false);
  } finally {
    void service.close();
  }
});

test('when the API keys are invalid, then createService throws a ConfigError and leaves no connection open', () => {
  expect(() => build({ SVC_API_KEYS: 'not a key list' })).toThrow();
});
