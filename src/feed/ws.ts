// The change feed over a WebSocket: JSON messages (`change`, `reset`, `close`), pings as heartbeats.
import type { WebSocket } from 'ws';
import { resetMessage } from './backlog';
import type { Position } from './cursor';
import type { ChangeEvent } from './event';
import type { Feed } from './feed';
import type { Filter, Sink } from './subscriber';

/** Each event's message, built once for all the sockets it goes to. */
const messages = new WeakMap<ChangeEvent, string>();
function message(event: ChangeEvent, cursor: string | undefined): string {
  // On a Redis Cluster each change also carries this client's resume point (`cursor`): a message of its own.
  if (cursor !== undefined) return JSON.stringify({ kind: 'change', ...event, cursor });
  let text = messages.get(event);
  if (text === undefined) {
    text = JSON.stringify({ kind: 'change', ...event });
    messages.set(event, text);
  }
  return text;
}

/** Close codes: the service goes away (shutdown), or the client should come back later and resume (too slow). */
const GOING_AWAY = 1001;
const TRY_AGAIN_LATER = 1013;
/** The credential it was opened with was removed or expired. */
const POLICY_VIOLATION = 1008;
const closeCode = (reason: string) =>
  /shutting down/.test(reason)
    ? GOING_AWAY
    : /credential|JWT/.test(reason)
      ? POLICY_VIOLATION
      : TRY_AGAIN_LATER;
/** Bytes the socket may hold unsent before the client counts as reading slower than events come. */
const HIGH_WATER_BYTES = 64 * 1024;

/**
 * Follows the feed into `ws` from `since` (or from now) until either side closes. A change is
 * `{kind: 'change', id, key, type, op, time}`; a resume point beyond the retention `{kind: 'reset', since, next,
 * message}`; before the service closes the socket, `{kind: 'close', reason}`.
 */
export async function serveWs(
  feed: Feed,
  ws: WebSocket,
  filter: Filter,
  since: Position | undefined,
  heartbeatMs: number,
): Promise<void> {
  let gone = false;
  let unsubscribe = () => {};
  // A client that has not answered the previous ping is gone (a dead TCP connection would otherwise linger).
  let alive = true;
  ws.on('pong', () => {
    alive = true;
  });
  const heartbeat = setInterval(() => {
    if (!alive) return ws.terminate();
    alive = false;
    ws.ping();
  }, heartbeatMs);
  const end = () => {
    gone = true;
    clearInterval(heartbeat);
    unsubscribe();
  };
  const sink: Sink = {
    transport: 'websocket',
    send(event, drained, cursor) {
      // ws has no 'drain': the callback of the message that filled the buffer says it has been written out.
      const full = ws.bufferedAmount >= HIGH_WATER_BYTES;
      ws.send(message(event, cursor), full ? () => drained() : undefined);
      return !full;
    },
    reset(from, next) {
      ws.send(JSON.stringify({ kind: 'reset', since: from, next, message: resetMessage(from) }));
    },
    drop(reason) {
      ws.send(JSON.stringify({ kind: 'close', reason }));
      // A close reason is at most 123 bytes: the full one went in the message above.
      ws.close(closeCode(reason), reason.slice(0, 120));
      end();
    },
  };
  ws.on('close', end);
  ws.on('error', end);
  try {
    unsubscribe = await feed.follow(filter, since, sink);
  } catch (err) {
    sink.drop(`the feed could not be followed: ${(err as Error).message}`);
    return;
  }
  if (gone) unsubscribe();
}
