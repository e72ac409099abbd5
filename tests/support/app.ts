// Builds an app wired to the test Redis under a key prefix of its own, and tears it down.
import { readFileSync } from 'node:fs';
import Redis from 'ioredis';
import { parse as parseYaml } from 'yaml';
import { OPENAPI_FILE } from '../../src/app';
import { loadConfig } from '../../src/config';
import { Contract } from '../../src/http/contract';
import { createLogger } from '../../src/observability/logger';
import { createService, type Service } from '../../src/service';
import { cleanup, testPrefix } from './keys';
import { recordStatuses } from './statuses';

let sharedContract: Contract | undefined;
/** The contract is read once per test file: compiling it is the slowest part of creating an app. */
export const contract = () => {
  sharedContract ??= new Contract(OPENAPI_FILE);
  return sharedContract;
};

let sharedDocument: Record<string, unknown> | undefined;
/** openapi.yaml parsed, once per test file (the service keeps only its compiled validators). */
export const openapiDocument = () => {
  sharedDocument ??= parseYaml(readFileSync(OPENAPI_FILE, 'utf8')) as Record<string, unknown>;
  return sharedDocument;
};

export interface TestApp extends Service {
  /** A plain client (no prefix handling) for looking at what the service wrote, as redis-cli would. */
  raw: Redis;
  /** The SVC_KEY_PREFIX of this app: raw keys are `${prefix}${key}`. */
  prefix: string;
  /** Removes the app's keys, then closes the service and the plain client. */
  close(): Promise<void>;
}

/** An app on the test Redis; `env` holds SVC_* overrides. Rate limits are off unless `env` turns them on. */
export async function testApp(name: string, env: Record<string, string> = {}): Promise<TestApp> {
  const prefix = testPrefix(name);
  const settings = {
    SVC_REDIS_URL: process.env.REDIS_URL,
    SVC_KEY_PREFIX: prefix,
    SVC_RATE_LIMIT_ENABLED: 'false',
    SVC_PROTECTED_MODE: 'false',
    ...env,
  };
  const config = loadConfig(settings);
  const service = createService(config, {
    logger: createLogger(config.log, true),
    // A contract is compiled with the batch limit, so a test that changes it gets its own.
    contract: env.SVC_BATCH_MAX_OPERATIONS === undefined ? contract() : undefined,
    // A reload reads the same settings again (and SVC_CONFIG_FILE, when `env` names one).
    loadConfig: () => loadConfig(settings),
  });
  // Unlike main.ts, the limiter's connection too: a test counts requests from the first one.
  await service.connect({ waitForLimiter: true });
  recordStatuses(service.data);
  if (service.admin) recordStatuses(service.admin);
  const raw = new Redis(process.env.REDIS_URL as string);
  return {
    ...service,
    raw,
    prefix,
    async close() {
      try {
        await cleanup(raw, prefix);
      } finally {
        await Promise.all([service.close(), raw.quit().catch(() => raw.disconnect())]);
      }
    },
  };
}
