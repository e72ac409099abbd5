// Per-test-file Redis key prefixes, and the cleanup that removes every key under one.
import { randomBytes } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { flush } from '../../src/admin/redis';
import type { RedisClient } from '../../src/redis/client';
import { createKeyspace } from '../../src/redis/keys';

/** `t:<name>:<random6>:`, unique per call; `name` is reduced to [A-Za-z0-9_.-]. */
export function testPrefix(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9_.-]/g, '_') || 'test';
  return `t:${safe}:${randomBytes(3).toString('hex')}:`;
}

/**
 * Removes every key under `prefix` (SCAN + UNLINK, over every master of a Cluster), the way the flush endpoint
 * does with SVC_KEY_PREFIX set; returns how many were removed. Give it a client without ioredis' `keyPrefix`.
 */
export async function cleanup(redis: Redis | Cluster, prefix: string): Promise<number> {
  if (!prefix) throw new Error('cleanup() needs a non-empty prefix');
  return flush(redis as RedisClient, createKeyspace(prefix));
}
