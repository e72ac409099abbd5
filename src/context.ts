// What every part of a running app shares (the composition's Context): the transport's parts, Redis, the store, feed.
import type { Config } from './config';
import type { Feed } from './feed/feed';
import type { Access, Transport } from './http/transport';
import type { Locks } from './locks/locks';
import type { Peers } from './peers';
import type { CapabilityWatch } from './redis/capability-watch';
import type { RedisClient } from './redis/client';
import type { Keyspace } from './redis/keys';
import type { Store } from './redis/store';

export type { Access };

export interface Context extends Transport {
  /** The current configuration; replaced by a reload. */
  config: Config;
  readonly redis: RedisClient;
  readonly keyspace: Keyspace;
  /** What the server allows, probed at each connection event of `redis` (never per request). */
  readonly capabilities: CapabilityWatch;
  /** Where data operations run: `redis` and `keyspace`, the deadline, the durable writer (engine/run.ts). */
  readonly store: Store;
  access: Access;
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
  /** Named locks (locks/): their waiting acquires' pub/sub connection is closed with the service. */
  readonly locks: Locks;
}
