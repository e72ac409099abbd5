// Per-test-file Redis key prefixes, and the cleanup that removes every key under one.
import { randomBytes } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';

/** `t:<name>:<random6>:`, unique per call; `name` is reduced to [A-Za-z0-9_.-]. */
export function testPrefix(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9_.-]/g, '_') || 'test';
  return `t:${safe}:${randomBytes(3).toString('hex')}:`;
}

const escapeGlob = (text: string) => text.replace(/[*?[\]\\]/g, '\\$&');

/**
 * SCAN + UNLINK of every key matching `${prefix}*`; returns how many were removed. Give it a client without
 * ioredis' `keyPrefix` option (that would prefix the UNLINK arguments twice). On a Cluster it scans every master
 * and unlinks one key per command, since keys on one node may hash to different slots.
 */
export async function cleanup(redis: Redis | Cluster, prefix: string): Promise<number> {
  if (!prefix) throw new Error('cleanup() needs a non-empty prefix');
  const cluster = redis.isCluster;
  const nodes: Redis[] = cluster ? (redis as Cluster).nodes('master') : [redis as Redis];
  let removed = 0;
  for (const node of nodes) {
    const stream = node.scanStream({ match: `${escapeGlob(prefix)}*`, count: 1000 });
    for await (const keys of stream as AsyncIterable<string[]>) {
      if (keys.length === 0) continue;
      if (cluster) {
        const pipeline = node.pipeline();
        for (const key of keys) pipeline.unlink(key);
        await pipeline.exec();
      } else {
        await node.unlink(...keys);
      }
      removed += keys.length;
    }
  }
  return removed;
}
