// What every part of a running app shares: the current config, Redis, the keyspace, logger, contract, access.
import type { Response } from 'express';
import type { Config } from '../config';
import type { Feed } from '../feed/feed';
import type { Logger } from '../observability/logger';
import type { Telemetry } from '../observability/observe';
import type { Peers } from '../peers';
import type { RedisClient } from '../redis/client';
import type { Keyspace } from '../redis/keys';
import type { Store } from '../redis/store';
import type { Contract, Operation, Permission } from './contract';

/** Decides who may do what; `authorize` throws a 403 ApiError when the caller lacks the permission or a key. */
export interface Access {
  authorize(res: Response, permission: Permission, keys: readonly string[]): void;
}

export interface Context {
  /** The current configuration; replaced by a reload. */
  config: Config;
  readonly redis: RedisClient;
  /** The rate limiter's own connection, so that its counters never wait behind data commands or hold them up. */
  readonly limiterRedis: RedisClient;
  readonly keyspace: Keyspace;
  /** Where data operations run: `redis` and `keyspace`, the deadline, the durable writer (ops/run.ts). */
  readonly store: Store;
  readonly logger: Logger;
  readonly contract: Contract;
  access: Access;
  /** The operations this app serves (filled as routes are registered; the contract test reads it). */
  readonly served: Operation[];
  /** Statistics, metrics and the clients list of this instance. */
  readonly telemetry: Telemetry;
  /** The other workers when SVC_WORKERS > 1 (admin figures are merged over all of them); absent otherwise. */
  readonly peers?: Peers;
  /** Re-reads the configuration and applies what can change live; resolves to a message (see reload.ts). */
  readonly reload: () => Promise<string>;
  /**
   * Run by a reload with the new configuration before it is applied; a hook that throws cancels the reload. A hook
   * may return what it changed beyond the settings themselves (the credentials in a keys file), to be reported.
   */
  readonly onReload: Array<(config: Config) => undefined | string[] | Promise<undefined | string[]>>;
  /** The change feed, when SVC_CHANGES_ENABLED is on. */
  feed?: Feed;
  /** True when any credential is configured (`info` reports it; a test may swap it). */
  authConfigured: () => boolean;
}
