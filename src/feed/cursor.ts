// A resume point of the feed: one stream id per stream, as clients see it (a plain id, or an opaque Cluster cursor).
import { cursorJson } from '../redis/cursor';
import { compareIds, parseId } from './event';

/** Stream key -> the id of the last event a client has from it ('0-0': none). */
export type Position = Map<string, string>;

/** How resume points read and print: see `plainCursor` and `clusterCursor`. */
export interface CursorFormat {
  /** The position `text` names, or undefined when it is not a resume point of this feed. */
  parse(text: string): Position | undefined;
  format(position: Position): string;
}

/** Moves `position` forward to `other`, stream by stream (never back). */
export function advance(position: Position, other: Position): void {
  for (const [stream, id] of other)
    if (compareIds(id, position.get(stream) ?? '0-0') > 0) position.set(stream, id);
}

/** One stream (standalone, Sentinel): the resume point is the stream id itself, as before Cluster support. */
export function plainCursor(stream: string): CursorFormat {
  return {
    parse(text) {
      const id = parseId(text);
      return id === undefined ? undefined : new Map([[stream, id]]);
    },
    format: (position) => position.get(stream) ?? '0-0',
  };
}

/** A Cluster stream's tag (see redis/feed-streams.ts): base-36 digits. */
const TAG = /^[0-9a-z]{1,6}$/;
const MAX_STREAMS = 64;

/**
 * Several streams (Redis Cluster, one per master): base64url of the JSON object {tag: id} (an opaque token for
 * clients). `name(tag)` is the stream of a tag, `tagOf` the reverse.
 */
export function clusterCursor(
  name: (tag: string) => string,
  tagOf: (stream: string) => string,
): CursorFormat {
  return {
    parse(text) {
      const value = cursorJson(text);
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
      const entries = Object.entries(value);
      if (entries.length > MAX_STREAMS) return undefined;
      const position: Position = new Map();
      for (const [tag, raw] of entries) {
        const id = typeof raw === 'string' && TAG.test(tag) ? parseId(raw) : undefined;
        if (id === undefined) return undefined;
        position.set(name(tag), id);
      }
      return position;
    },
    format(position) {
      const object: Record<string, string> = {};
      for (const [stream, id] of [...position].sort(([a], [b]) => (a < b ? -1 : 1)))
        object[tagOf(stream)] = id;
      return Buffer.from(JSON.stringify(object)).toString('base64url');
    },
  };
}
