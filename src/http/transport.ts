// What the HTTP layer takes from a running app: the configuration, logs, counters, the contract and access rules.
import type { Response } from 'express';
import type { Config } from '../config';
import type { Logger } from '../observability/logger';
import type { Telemetry } from '../observability/observe';
import type { RedisClient } from '../redis/client';
import type { Keyspace } from '../redis/keys';
import type { Contract, Operation, Permission } from './contract';

/** Decides who may do what; `authorize` throws a 403 ApiError when the caller lacks the permission or a key. */
export interface Access {
  authorize(res: Response, permission: Permission, keys: readonly string[]): void;
}

/** The part of the app's Context (src/context.ts) that validation, rate limits and listeners need. */
export interface Transport {
  /** The current configuration; replaced by a reload (read it per request). */
  readonly config: Config;
  readonly logger: Logger;
  /** Statistics, metrics and the clients list of this instance. */
  readonly telemetry: Telemetry;
  readonly contract: Contract;
  readonly access: Access;
  /** The operations this app serves (filled as routes are registered; the contract test reads it). */
  readonly served: Operation[];
  /** The rate limiter's own connection, so that its counters never wait behind data commands or hold them up. */
  readonly limiterRedis: RedisClient;
  /** Where the rate limiter keeps its counters (under the internal prefix). */
  readonly keyspace: Keyspace;
  /** True when any credential is configured (protected mode and `info` depend on it; a test may swap it). */
  authConfigured: () => boolean;
}
