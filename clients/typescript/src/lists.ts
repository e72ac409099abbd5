// client.lists: ordered items; push and pop at either end, a pop that waits (a work queue), pages.
import {
  type Api,
  type CallOptions,
  unwrap,
  unwrapOrNull,
  type WriteOptions,
  writeHeaders,
} from './transport.js';

export type End = 'left' | 'right';

const at = (key: string) => ({ params: { path: { key } } });

export function lists(api: Api) {
  return {
    /** Adds items at the tail (`end: 'right'`, default) or the head; answers the list's new length. */
    async push(key: string, values: string[], options: WriteOptions & { end?: End; ttl?: number } = {}) {
      const { end, ttl } = options;
      const { data } = await unwrap(
        api.POST('/store/list/{key}/push', {
          ...at(key),
          body: { values, ...(end === undefined ? {} : { end }), ...(ttl === undefined ? {} : { ttl }) },
          headers: writeHeaders(options),
          signal: options.signal,
        }),
      );
      return data.length;
    },
    /**
     * Removes and answers up to `count` items (default 1) from the head (`end: 'left'`, default) or the tail; with
     * `wait` (seconds), waits that long for an item when the list is empty. An empty answer: nothing came.
     */
    async pop(key: string, options: WriteOptions & { end?: End; count?: number; wait?: number } = {}) {
      const { end, count, wait } = options;
      const got = await unwrapOrNull(
        api.POST('/store/list/{key}/pop', {
          ...at(key),
          body: {
            ...(end === undefined ? {} : { end }),
            ...(count === undefined ? {} : { count }),
            ...(wait === undefined ? {} : { wait }),
          },
          headers: writeHeaders(options),
          signal: options.signal,
        }),
      );
      return got?.data.values ?? [];
    },
    /** Items `start`..`stop` (inclusive, negative from the end; default the first 100), or null: no key. */
    async range(key: string, options: CallOptions & { start?: number; stop?: number } = {}) {
      const { start, stop } = options;
      const got = await unwrapOrNull(
        api.GET('/store/list/{key}', {
          params: { path: { key }, query: { start, stop } },
          signal: options.signal,
        }),
      );
      return got && { values: got.data.values, length: got.data.length, ttl: got.data.ttl, etag: got.etag };
    },
    async length(key: string): Promise<number> {
      return (await unwrapOrNull(api.GET('/store/list/{key}/length', at(key))))?.data.length ?? 0;
    },
    async delete(key: string, options: WriteOptions = {}): Promise<boolean> {
      const { data } = await unwrap(
        api.DELETE('/store/list/{key}', { ...at(key), headers: writeHeaders(options) }),
      );
      return data.deleted;
    },
  };
}
