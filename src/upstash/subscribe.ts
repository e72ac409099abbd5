// /upstash/subscribe/<channels> and /upstash/psubscribe/<patterns>: Server-Sent Events in @upstash/redis's format.
import type { Response } from 'express';
import { ApiError, REDIS_RETRY_AFTER } from '../errors';
import type { WaiterPool } from '../redis/waiters';
import { escapeGlob } from './keys';

/** A comment line now and then keeps proxies from closing an idle stream. */
const HEARTBEAT_MS = 15_000;

/**
 * Subscribes on a pooled connection of its own (it counts against SVC_LIST_MAX_WAITERS, like any connection that
 * waits) until the client goes away. Each event is one `data:` line, as the SDK reads them:
 * `subscribe,<channel>,<count>`, `message,<channel>,<message>`, `psubscribe,<pattern>,<count>`,
 * `pmessage,<pattern>,<channel>,<message>`. Channels and patterns are under the caller's prefix, and are sent
 * back without it.
 */
export async function subscribe(
  res: Response,
  waiters: WaiterPool | undefined,
  names: string[],
  pattern: boolean,
  prefix: string,
  client: string,
): Promise<void> {
  if (names.length === 0 || names.some((n) => n === ''))
    throw new ApiError('invalid_request', 'ERR name at least one channel: /upstash/subscribe/<channel>/...');
  if (!waiters)
    throw new ApiError('service_unavailable', 'Subscriptions are not available here', {
      retryAfter: REDIS_RETRY_AFTER,
    });
  const conn = await waiters.acquire(client);
  const strip = (name: string) => (name.startsWith(prefix) ? name.slice(prefix.length) : name);
  const send = (...parts: (string | number)[]) => res.write(`data: ${parts.join(',')}\n\n`);
  let heartbeat: NodeJS.Timeout | undefined;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    waiters.drop(conn);
    waiters.release(conn, false, client);
    res.end();
  };
  try {
    if (pattern) {
      conn.on('pmessage', (p: string, channel: string, message: string) =>
        send('pmessage', strip(p), strip(channel), message),
      );
      await conn.psubscribe(...names.map((n) => escapeGlob(prefix) + n));
    } else {
      conn.on('message', (channel: string, message: string) => send('message', strip(channel), message));
      await conn.subscribe(...names.map((n) => prefix + n));
    }
  } catch (err) {
    waiters.release(conn, false, client);
    throw err;
  }
  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  names.forEach((name, i) => {
    send(pattern ? 'psubscribe' : 'subscribe', name, i + 1);
  });
  heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
  heartbeat.unref();
  res.once('close', end);
  conn.once('end', end);
  if (res.destroyed) end();
}
