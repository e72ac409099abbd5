// What differs between a lock (one holder: a string key) and a semaphore (`limit` holders: a sorted set).
import { sendInternal } from '../engine/send';
import type { Store } from '../redis/store';

/** An attempt's reply: [1, fence] when taken, [0, the holder's fence (lock) or holders (semaphore), ms left]. */
export type Attempt = [number, number, number?];

/** A lock's or semaphore's Redis side; each call checks the owner token in Redis, in one step. */
export interface Kind {
  readonly noun: 'lock' | 'semaphore';
  /** Its Redis key (also the channel its waiters listen on) and fencing counter. */
  keys(store: Store, name: string): { key: string; fence: string };
  attempt(store: Store, name: string, secret: string, ttlMs: number, limit: number): Promise<Attempt>;
  /** 1 when the token still held it. */
  renew(store: Store, name: string, token: string, ttlMs: number): Promise<unknown>;
  /** 1 when the token still held it; the waiters are told. */
  release(store: Store, name: string, token: string): Promise<unknown>;
  /** [fence, ms left] (lock) or [holders, largest fence, ms left] (semaphore); null or [0] when free. */
  status(store: Store, name: string): Promise<number[] | null>;
}

/** How a server deletes a key only when it holds a value: a command of its own, else our script. */
type CompareAndDelete = 'DELEX' | 'DELIFEQ' | 'script';

/** Learned once per process from COMMAND INFO: Redis 8.4's DELEX IFEQ, Valkey 9's DELIFEQ, else our script. */
function compareAndDelete(): (store: Store) => Promise<CompareAndDelete> {
  let known: Promise<CompareAndDelete> | undefined;
  return (store) => {
    known ??= (store.redis.call('COMMAND', 'INFO', 'DELEX', 'DELIFEQ') as Promise<unknown[]>).then(
      ([delex, delifeq]) => (delex ? 'DELEX' : delifeq ? 'DELIFEQ' : 'script'),
      () => {
        known = undefined;
        return 'script' as const;
      },
    );
    return known;
  };
}

export function lockKind(): Kind {
  const how = compareAndDelete();
  const keys = (store: Store, name: string) => store.keyspace.lock(name);
  return {
    noun: 'lock',
    keys,
    async attempt(store, name, secret, ttlMs) {
      const { key, fence } = keys(store, name);
      return (await sendInternal(store, 'lockAcquire', key, [key, fence, secret, ttlMs], true)) as Attempt;
    },
    renew(store, name, token, ttlMs) {
      const { key } = keys(store, name);
      return sendInternal(store, 'lockRenew', key, [key, token, ttlMs], true);
    },
    async release(store, name, token) {
      const { key } = keys(store, name);
      const command = await how(store);
      if (command === 'script') return sendInternal(store, 'lockRelease', key, [key, token], true);
      const argv = command === 'DELEX' ? [command, key, 'IFEQ', token] : [command, key, token];
      const released = await sendInternal(store, 'call', key, argv, true);
      if (released === 1) await store.redis.publish(key, '').catch(() => {});
      return released;
    },
    async status(store, name) {
      const { key } = keys(store, name);
      return (await sendInternal(store, 'lockStatus', key, [key], false)) as number[] | null;
    },
  };
}

export function semaphoreKind(): Kind {
  const keys = (store: Store, name: string) => store.keyspace.semaphore(name);
  return {
    noun: 'semaphore',
    keys,
    async attempt(store, name, secret, ttlMs, limit) {
      const { key, fence } = keys(store, name);
      return (await sendInternal(
        store,
        'semaphoreAcquire',
        key,
        [key, fence, secret, ttlMs, limit],
        true,
      )) as Attempt;
    },
    renew(store, name, token, ttlMs) {
      const { key } = keys(store, name);
      return sendInternal(store, 'semaphoreHold', key, [key, token, ttlMs], true);
    },
    release(store, name, token) {
      const { key } = keys(store, name);
      return sendInternal(store, 'semaphoreHold', key, [key, token, 0], true);
    },
    async status(store, name) {
      const { key } = keys(store, name);
      return (await sendInternal(store, 'semaphoreStatus', key, [key], false)) as number[];
    },
  };
}
