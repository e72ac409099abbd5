// Apps with the change feed on, each test file on a Redis database of its own (the stream is one per database).
import type { Redis } from 'ioredis';
import { type ChangeEvent, toEvent } from '../../src/feed/event';
import { createKeyspace } from '../../src/redis/keys';
import { type TestApp, testApp } from './app';

/** The feed's stream key (the same in every database). */
export const STREAM = createKeyspace('').changes;

/** `REDIS_URL` with another database number: the feed tests must not read each other's events. */
export function databaseUrl(db: number): string {
  const url = new URL(process.env.REDIS_URL as string);
  url.pathname = `/${db}`;
  return url.toString();
}

/** An app with SVC_CHANGES_ENABLED on database `db`; closing it also drops that database's stream. */
export async function feedApp(name: string, db: number, env: Record<string, string> = {}): Promise<TestApp> {
  const app = await testApp(name, { SVC_REDIS_URL: databaseUrl(db), SVC_CHANGES_ENABLED: 'true', ...env });
  await app.raw.del(STREAM);
  return {
    ...app,
    async close() {
      await app.raw.del(STREAM).catch(() => {});
      await app.close();
    },
  };
}

/** The last event id of the stream ('0-0' when empty): read what came after with `eventsAfter`. */
export async function lastId(raw: Redis): Promise<string> {
  const [last] = await raw.xrevrange(STREAM, '+', '-', 'COUNT', 1);
  return last?.[0] ?? '0-0';
}

/** The events appended after `id`, in order, as clients receive them. */
export async function eventsAfter(raw: Redis, id: string): Promise<ChangeEvent[]> {
  return (await raw.xrange(STREAM, `(${id}`, '+')).map(toEvent);
}
