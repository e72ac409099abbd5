// client.keys: every key by prefix and type (an async iterator over SCAN pages), one key's kind, delete any key.
import type { components } from './schema.js';
import {
  type Api,
  type CallOptions,
  unwrap,
  unwrapOrNull,
  type WriteOptions,
  writeHeaders,
} from './transport.js';

export type KeyEntry = components['schemas']['KeyEntry'];

export interface ListOptions extends CallOptions {
  prefix?: string;
  /** A Redis type: `string`, `hash`, `set`, `list`, `zset`, ... */
  type?: string;
  /** Keys a page aims for (1..1000; default 100). */
  limit?: number;
}

export function keys(api: Api) {
  const family = {
    /** One page of the walk: pass its `cursor` to the next call until `complete`. */
    async page(options: ListOptions & { cursor?: string } = {}) {
      const { prefix, type, limit, cursor } = options;
      const query = { prefix, type, limit, cursor: cursor || undefined };
      const { data } = await unwrap(api.GET('/store/keys', { params: { query }, signal: options.signal }));
      return data;
    },
    /** Every key (SCAN's guarantee: each key that exists for the whole walk comes at least once), page by page. */
    async *list(options: ListOptions = {}): AsyncGenerator<KeyEntry, void, undefined> {
      let cursor: string | undefined;
      for (;;) {
        const page = await family.page({ ...options, cursor });
        yield* page.keys;
        if (page.complete) return;
        cursor = page.cursor;
      }
    },
    /** A key's Redis type, TTL and size, or null when it does not exist. */
    async info(key: string) {
      return (await unwrapOrNull(api.GET('/store/keys/{key}', { params: { path: { key } } })))?.data ?? null;
    },
    /** Deletes a key of any type. */
    async delete(key: string, options: WriteOptions = {}): Promise<boolean> {
      const { data } = await unwrap(
        api.DELETE('/store/keys/{key}', { params: { path: { key } }, headers: writeHeaders(options) }),
      );
      return data.deleted;
    },
  };
  return family;
}
