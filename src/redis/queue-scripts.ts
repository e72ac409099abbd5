// The queue family's Lua scripts (src/redis/scripts/queue-*.lua), each prefixed with the queue library (queue.lua).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LUA_CHANGED } from './change-event';

const source = (file: string) => readFileSync(join(__dirname, 'scripts', file), 'utf8');

/** The scripts that write (and append a change event): on a Cluster with the feed on, each call ends with its stream. */
export const QUEUE_WRITES = [
  'queueConfigure',
  'queueDelete',
  'queueSend',
  'queueReceive',
  'queueSettle',
  'queueRedrive',
  'queuePurge',
] as const;
export const QUEUE_READS = ['queuePeek', 'queueStats'] as const;
export type QueueScript = (typeof QUEUE_WRITES)[number] | (typeof QUEUE_READS)[number];

const file = (name: QueueScript) => `queue-${name.slice('queue'.length).toLowerCase()}-1.lua`;

/** ioredis script definitions; `feedHeader` is the `local FEED = ...` lines the typed scripts start with too. */
export function queueScripts(feedHeader: string): Record<QueueScript, { lua: string; numberOfKeys: 1 }> {
  const lib = source('queue.lua');
  const out = {} as Record<QueueScript, { lua: string; numberOfKeys: 1 }>;
  for (const name of QUEUE_WRITES)
    out[name] = { lua: `${feedHeader}\n${LUA_CHANGED}\n${lib}\n${source(file(name))}`, numberOfKeys: 1 };
  for (const name of QUEUE_READS)
    out[name] = { lua: `local FEED = false\n${lib}\n${source(file(name))}`, numberOfKeys: 1 };
  return out;
}

/**
 * The scripts a request may run under an Idempotency-Key (idempotent-n.lua's INNER), as bodies of (KEYS, ARGV): every
 * write but the receive, whose long poll is several calls (a retried receive is safe as it is: docs/queues.md).
 */
export function queueInnerBodies(): Record<string, string> {
  const lib = source('queue.lua');
  const bodies: Record<string, string> = {};
  for (const name of QUEUE_WRITES)
    if (name !== 'queueReceive') bodies[name] = `${lib}\n${source(file(name))}`;
  return bodies;
}
