// Apps with the change feed on, each test file on a Redis database of its own (the stream is one per database).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Redis from 'ioredis';
import { type Config, loadConfig } from '../../src/config';
import { type ChangeEvent, toEvent } from '../../src/feed/event';
import { type Listener, listen } from '../../src/http/server';
import { createLogger } from '../../src/observability/logger';
import { createKeyspace } from '../../src/redis/keys';
import { createService, type Service } from '../../src/service';
import { contract, type TestApp, testApp } from './app';
import { cleanup } from './keys';

/** The feed's stream key of an app (one per key prefix). */
export const streamOf = (app: { prefix: string }) => createKeyspace(app.prefix).changes;

/** `REDIS_URL` with another database number: the feed tests must not read each other's events. */
export function databaseUrl(db: number): string {
  const url = new URL(process.env.REDIS_URL as string);
  url.pathname = `/${db}`;
  return url.toString();
}

/**
 * An app with SVC_CHANGES_ENABLED on database `db`, with `raw` on that database; closing it removes its keys there
 * and drops that database's stream.
 */
export async function feedApp(name: string, db: number, env: Record<string, string> = {}): Promise<TestApp> {
  const url = databaseUrl(db);
  const app = await testApp(name, { SVC_REDIS_URL: url, SVC_CHANGES_ENABLED: 'true', ...env });
  const raw = new Redis(url);
  await raw.del(streamOf(app));
  return {
    ...app,
    raw,
    async close() {
      try {
        await cleanup(raw, app.prefix);
        await raw.del(streamOf(app));
      } finally {
        await raw.quit().catch(() => raw.disconnect());
        await app.close();
      }
    },
  };
}

/** The last event id of the stream ('0-0' when empty): read what came after with `eventsAfter`. */
export async function lastId(app: TestApp): Promise<string> {
  const [last] = await app.raw.xrevrange(streamOf(app), '+', '-', 'COUNT', 1);
  return last?.[0] ?? '0-0';
}

/** The events appended after `id`, in order, as clients receive them. */
export async function eventsAfter(app: TestApp, id: string): Promise<ChangeEvent[]> {
  return (await app.raw.xrange(streamOf(app), `(${id}`, '+')).map(toEvent);
}

/** One Server-Sent Event as a client parses it: a change (no event name), `reset` or `close`; comments apart. */
/**
 * Messages as they arrive, and `waitFor(count)`: resolves with the first `count` once that many came, rejects after
 * `timeoutMs` saying how many did.
 */
export function inbox<T>() {
  const messages: T[] = [];
  const waiters: (() => void)[] = [];
  const push = (message?: T) => {
    if (message !== undefined) messages.push(message);
    for (const w of waiters.splice(0)) w();
  };
  const waitFor = (count: number, timeoutMs = 20_000) =>
    new Promise<T[]>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${messages.length} of ${count} messages within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const check = () => {
        if (messages.length >= count) {
          clearTimeout(timer);
          resolve(messages.slice(0, count));
        } else waiters.push(check);
      };
      check();
    });
  return { messages, push, waitFor };
}

/** A service with the change feed on, on the Redis Cluster of `nodes`, listening on a free loopback port. */
export async function clusterFeedService(
  nodes: string,
  prefix: string,
  env: Record<string, string> = {},
): Promise<{ config: Config; service: Service; listener: Listener; base: string }> {
  const config = loadConfig({
    SVC_REDIS_URL: 'redis://127.0.0.1:6379',
    SVC_REDIS_CLUSTER_NODES: nodes,
    SVC_KEY_PREFIX: prefix,
    SVC_RATE_LIMIT_ENABLED: 'false',
    SVC_PROTECTED_MODE: 'false',
    SVC_CHANGES_ENABLED: 'true',
    ...env,
  });
  const service = createService(config, { logger: createLogger(config.log, true), contract: contract() });
  await service.connect({ waitForLimiter: true });
  const listener = await listen(service.data, service.context, 0, '127.0.0.1');
  const base = `http://127.0.0.1:${(listener.server.address() as AddressInfo).port}`;
  return { config, service, listener, base };
}

export interface SseMessage {
  id?: string;
  event: string;
  data: unknown;
}

export interface SseClient {
  readonly status: Promise<number>;
  readonly messages: SseMessage[];
  readonly comments: string[];
  /** Resolves once `count` messages arrived (rejects after `timeoutMs`: generous, it only guards against a hang). */
  waitFor(count: number, timeoutMs?: number): Promise<SseMessage[]>;
  /** Resolves when the server ended the stream. */
  readonly ended: Promise<void>;
  /** Starts reading a stream opened with `paused` (whose socket buffers fill up meanwhile). */
  resume(): void;
  close(): void;
}

/** Opens `GET <base>/store/changes` with Accept: text/event-stream and parses what arrives. */
export function sse(
  base: string,
  query = '',
  headers: Record<string, string> = {},
  { paused = false } = {},
): SseClient {
  let response: http.IncomingMessage | undefined;
  const { messages, push, waitFor } = inbox<SseMessage>();
  const comments: string[] = [];
  let buffer = '';
  let resolveStatus: (status: number) => void = () => {};
  let resolveEnded: () => void = () => {};
  const status = new Promise<number>((resolve) => {
    resolveStatus = resolve;
  });
  const ended = new Promise<void>((resolve) => {
    resolveEnded = resolve;
  });
  const req = http.get(`${base}/store/changes${query}`, {
    headers: { Accept: 'text/event-stream', ...headers },
  });
  req.on('response', (res) => {
    resolveStatus(res.statusCode ?? 0);
    response = res;
    if (paused) res.pause();
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf('\n\n');
        const message: SseMessage = { event: 'message', data: undefined };
        let isMessage = false;
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) comments.push(line.slice(1).trim());
          else if (line.startsWith('id: ')) message.id = line.slice(4);
          else if (line.startsWith('event: ')) message.event = line.slice(7);
          else if (line.startsWith('data: ')) {
            message.data = JSON.parse(line.slice(6));
            isMessage = true;
          }
        }
        if (isMessage) messages.push(message);
      }
      push();
    });
    res.on('end', () => resolveEnded());
    res.on('close', () => resolveEnded());
  });
  req.on('error', () => resolveEnded());
  const resume = () => response?.resume();
  return { status, messages, comments, waitFor, ended, resume, close: () => req.destroy() };
}
