// createGateway(options): the typed client of the Redis HTTP gateway, one object per family. Works wherever fetch
// does (Node 20+, browsers): no Node-only API.
import { batch } from './batch.js';
import { changes } from './changes.js';
import { hashes } from './hashes.js';
import { keys } from './keys.js';
import { lists } from './lists.js';
import { locks } from './locks.js';
import { queues } from './queues.js';
import { ratelimits } from './ratelimits.js';
import { sets } from './sets.js';
import { strings } from './strings.js';
import { type Api, createApi, type GatewayOptions, unwrap } from './transport.js';
import { zsets } from './zsets.js';

export type { BatchOperation } from './batch.js';
export type { ChangeEvent, ChangesPage, SubscribeOptions, Subscription } from './changes.js';
export { type ErrorBody, type ErrorType, GatewayError } from './errors.js';
export type { Fields, HashSetOptions, HashValue } from './hashes.js';
export type { KeyEntry, ListOptions } from './keys.js';
export type { End } from './lists.js';
export type { AcquireOptions, HeldLock, LockGrant, LockStatus, WithLockOptions } from './locks.js';
export type {
  MessageInput,
  MessagesOptions,
  QueueMessage,
  QueueSettings,
  QueueState,
  ReceiveOptions,
  SettleResult,
} from './queues.js';
export type { RateLimitDecision, RateLimitPolicy } from './ratelimits.js';
export { delayFor, type RetryOptions, repeatable } from './retry.js';
export type { components, paths } from './schema.js';
export type { SetOptions, StringValue } from './strings.js';
export type { Api, CallOptions, GatewayOptions, WriteOptions } from './transport.js';
export type { UpdateOptions } from './update.js';
export type { Score, ScoredMember } from './zsets.js';

export function createGateway(options: GatewayOptions) {
  const api = createApi(options);
  return {
    strings: strings(api),
    hashes: hashes(api),
    sets: sets(api),
    lists: lists(api),
    zsets: zsets(api),
    keys: keys(api),
    changes: changes(api),
    queues: queues(api),
    locks: locks(api),
    ratelimits: ratelimits(api),
    batch: batch(api),
    /** Who the credential is: its id, permissions and key prefix (a tenant). */
    async whoami() {
      return (await unwrap(api.GET('/store/whoami'))).data;
    },
    /** The typed openapi-fetch client itself, for every other operation of the contract. */
    api: api as Api,
  };
}

export type Gateway = ReturnType<typeof createGateway>;
