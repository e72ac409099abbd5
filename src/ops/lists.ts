// List operations: each says which commands it sends and what their replies mean; a pop's wait is in list-wait.ts.
import { ApiError } from '../errors';
import { type KeyInput, keyOps } from './keys';
import { blockingPop } from './list-wait';
import {
  checkValueSize,
  created,
  type Limits,
  type Op,
  ok,
  present,
  type ReadReply,
  readOp,
  typedRead,
  valued,
  writeOp,
} from './op';

/** At most this many items per range read or pop: a request's cost stays bounded whatever the list holds. */
export const LIST_PAGE_MAX = 1000;
/** A range read without `stop` answers this many items. */
export const LIST_PAGE_DEFAULT = 100;

export type End = 'left' | 'right';

export interface PushInput extends KeyInput {
  values: string[];
  end?: End;
  ttl?: number;
  /** `If-None-Match: *`: push only when the key does not exist yet (409 key_exists otherwise). */
  ifAbsent?: boolean;
}
export interface PopInput extends KeyInput {
  end?: End;
  count?: number;
  /** Seconds to wait for an item when the list is empty (a route only; batches refuse it). */
  wait?: number;
}
export interface RangeInput extends KeyInput {
  start?: number;
  stop?: number;
}
export interface IndexInput extends KeyInput {
  index: string | number;
}
export interface SetIndexInput extends IndexInput {
  value: string;
}
export interface TrimInput extends KeyInput {
  start: number;
  stop: number;
}
export interface RemoveInput extends KeyInput {
  value: string;
  /** LREM's count: 0 every occurrence, > 0 the first ones from the left, < 0 from the right. */
  count?: number;
}

const side = (end: End) => (end === 'left' ? 'L' : 'R');

const indexNotFound = (index: string | number, key: string) =>
  new ApiError('index_not_found', `Index ${index} is out of range of list '${key}'`);

/**
 * The LRANGE bounds of a page: `stop` defaults to a page of LIST_PAGE_DEFAULT items from `start`. Both bounds
 * must count from the same end, so that the page's size is known without reading the list, and span at most
 * LIST_PAGE_MAX items.
 */
export function pageBounds(start = 0, stop?: number): [number, number] {
  // Capped at 2^53 - 1, the largest index a JSON number holds exactly (no list is that long).
  const last =
    stop ??
    (start < 0
      ? Math.min(start + LIST_PAGE_DEFAULT - 1, -1)
      : Math.min(start + LIST_PAGE_DEFAULT - 1, Number.MAX_SAFE_INTEGER));
  if (start < 0 !== last < 0) {
    throw new ApiError(
      'invalid_request',
      `start (${start}) and stop (${last}) must both count from the head (>= 0) or both from the tail (< 0), ` +
        `so that a page is at most ${LIST_PAGE_MAX} items; 'length' in the answer tells where the list ends`,
    );
  }
  if (last - start + 1 > LIST_PAGE_MAX) {
    throw new ApiError(
      'invalid_request',
      `start ${start} to stop ${last} asks for ${last - start + 1} items; at most ${LIST_PAGE_MAX} per request`,
    );
  }
  return [start, last];
}

/** The longest `wait` when the settings give none (SVC_LIST_MAX_WAIT). */
export const LIST_MAX_WAIT_DEFAULT = 30;

/** The normal pop: a script call; a missing (Redis keeps no empty list) key is 404, or the bounded wait. */
function pop({ key, end = 'left', count, wait }: PopInput, limits: Limits): Op {
  const maxWait = limits.listMaxWait ?? LIST_MAX_WAIT_DEFAULT;
  if (wait !== undefined && wait > maxWait) {
    throw new ApiError('invalid_request', `wait is ${wait} s; at most ${maxWait} s (SVC_LIST_MAX_WAIT)`);
  }
  const op = writeOp(
    'list',
    key,
    { condition: 'present' },
    (r) => {
      const reply = present(r, key)[1];
      return ok({ success: true, values: Array.isArray(reply) ? reply : [reply] });
    },
    `${side(end)}POP`,
    ...(count === undefined ? [] : [count]),
  );
  const popping = { ...op, values: ['values'], pops: true };
  return wait ? { ...popping, whenEmpty: blockingPop({ key, end, count: count ?? 1, wait }) } : popping;
}

/** An operation whose answer holds one `value`. */
function valueOp<F extends (...args: never[]) => Op>(factory: F) {
  return (...args: Parameters<F>): Op => valued(factory(...args), 'value');
}
const readValue = valueOp(readOp);
const writeValue = valueOp(writeOp);

export function listOps(limits: Limits) {
  return {
    ...keyOps('list'),
    /** Pushing merges: the expiry is kept unless `ttl` is given; a new list has none. */
    push: ({ key, values, end = 'right', ttl, ifAbsent }: PushInput) => {
      values.forEach((value, i) => {
        checkValueSize(value, limits, `value at values[${i}]`);
      });
      return writeOp(
        'list',
        key,
        // Long pushes go in chunks whose replies are summed: the length comes from LLEN.
        { condition: ifAbsent ? 'absent' : '', ttl, count: 'LLEN', stride: 1 },
        (r) => created(r?.[0] === 0, { success: true, key, length: r?.[2] }),
        `${side(end)}PUSH`,
        ...values,
      );
    },
    pop: (input: PopInput) => pop(input, limits),
    /** The page and the whole length, read in one atomic script call (runOp batches two commands). */
    range: ({ key, start, stop }: RangeInput): Op => {
      const [first, last] = pageBounds(start, stop);
      return {
        writes: false,
        values: ['values'],
        keys: [key],
        commands: [typedRead('list', key, 'LRANGE', first, last), typedRead('list', key, 'LLEN')],
        result: ([page, length]) => {
          const [values, ttl] = present(page as ReadReply, key) as [string[], number];
          return ok({ values, length: (length as ReadReply)?.[0] ?? 0, start: first, stop: last, ttl });
        },
      };
    },
    length: ({ key }: KeyInput) =>
      readOp('list', key, (reply) => ok({ length: present(reply, key)[0] }), 'LLEN'),
    index: ({ key, index }: IndexInput) =>
      readValue(
        'list',
        key,
        (reply) => {
          const value = present(reply, key)[0];
          if (typeof value !== 'string') throw indexNotFound(index, key);
          return ok({ index: Number(index), value });
        },
        'LINDEX',
        index,
      ),
    /** LSET refuses an index beyond the end (typed_write answers its error): 404 index_not_found. */
    setIndex: ({ key, index, value }: SetIndexInput) => {
      checkValueSize(value, limits);
      return writeValue(
        'list',
        key,
        { condition: 'present' },
        (r) => {
          present(r, key);
          return ok({ success: true, index: Number(index), value });
        },
        'LSET',
        index,
        value,
      );
    },
    /** Trimming to an empty range removes the key (Redis keeps no empty list): `length: 0`. */
    trim: ({ key, start, stop }: TrimInput) =>
      writeOp(
        'list',
        key,
        { condition: 'present', count: 'LLEN' },
        (r) => ok({ success: true, length: present(r, key)[2] }),
        'LTRIM',
        start,
        stop,
      ),
    /** Like a member delete, idempotent: a missing list removes nothing (`removed: 0`). */
    remove: ({ key, value, count = 0 }: RemoveInput) => {
      checkValueSize(value, limits);
      return writeOp(
        'list',
        key,
        { count: 'LLEN' },
        (r) => ok({ success: true, removed: r?.[1] ?? 0, length: r?.[2] ?? 0 }),
        'LREM',
        count,
        value,
      );
    },
  };
}

export type ListOps = ReturnType<typeof listOps>;
