// The change feed as Server-Sent Events: `id:` is the stream id, so EventSource resumes with Last-Event-ID.
import type { Request, Response } from 'express';
import { resetMessage } from './backlog';
import type { Position } from './cursor';
import type { ChangeEvent } from './event';
import type { Feed } from './feed';
import type { Filter, Sink } from './subscriber';

const data = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;

/** Each event's frame, built once for all the streams it goes to. */
const frames = new WeakMap<ChangeEvent, string>();
function frame(event: ChangeEvent, cursor: string | undefined): string {
  // On a Redis Cluster the resume point is this client's cursor, not the event's id: a frame of its own.
  if (cursor !== undefined) return `id: ${cursor}\n${data(event)}`;
  let text = frames.get(event);
  if (text === undefined) {
    text = `id: ${event.id}\n${data(event)}`;
    frames.set(event, text);
  }
  return text;
}

/**
 * Streams the feed into `res` until the client goes, the service drops it, or it shuts down. A change is an
 * unnamed event (EventSource's `onmessage`); `reset` and `close` are named events; heartbeats are comments.
 */
export async function serveSse(
  feed: Feed,
  req: Request,
  res: Response,
  filter: Filter,
  since: Position | undefined,
  heartbeatMs: number,
): Promise<void> {
  let gone = false;
  let heartbeat: NodeJS.Timeout | undefined;
  let unsubscribe = () => {};
  const end = () => {
    gone = true;
    clearInterval(heartbeat);
    unsubscribe();
  };
  // Headers go out with the first write: a full feed (503) or a Redis failure can still answer as JSON before it.
  const head = () => {
    if (res.headersSent) return;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      // Proxies such as nginx would otherwise buffer the stream.
      'X-Accel-Buffering': 'no',
    });
  };
  // The frames of one hub slice are joined and leave in one write (one chunk, one system call), not one each.
  let pending = '';
  const flush = () => {
    const text = pending;
    pending = '';
    if (text !== '' && !res.writableEnded) res.write(text);
  };
  const sink: Sink = {
    transport: 'sse',
    send(event, drained, cursor) {
      head();
      if (pending === '') process.nextTick(flush);
      pending += frame(event, cursor);
      // The frame is taken either way; a full transport (the last slice is still unsent) takes no more for now.
      if (!res.writableNeedDrain) return true;
      res.once('drain', drained);
      return false;
    },
    reset(from, next) {
      head();
      flush();
      res.write(`id: ${next}\nevent: reset\n${data({ since: from, next, message: resetMessage(from) })}`);
    },
    drop(reason) {
      head();
      flush();
      res.end(`event: close\n${data({ reason })}`);
      end();
    },
  };
  req.on('close', end);
  try {
    unsubscribe = await feed.follow(filter, since, sink);
  } catch (err) {
    if (!res.headersSent) throw err;
    sink.drop('the feed could not be read; resume from the last event received');
    return;
  }
  if (gone) return unsubscribe();
  head();
  // A first comment, so that the client (and any proxy) sees the stream open at once.
  res.write(': following changes\n\n');
  heartbeat = setInterval(() => res.write(': heartbeat\n\n'), heartbeatMs);
}
