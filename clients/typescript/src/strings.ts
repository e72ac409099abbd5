// client.strings: one string value per key, counters (lossless, as bigint) and update(key, fn).
import {
  type Api,
  type CallOptions,
  unwrap,
  unwrapOrNull,
  type WriteOptions,
  writeHeaders,
} from './transport.js';
import { readModifyWrite, type UpdateOptions } from './update.js';

export interface StringValue {
  value: string;
  /** Remaining seconds; -1 without expiry. */
  ttl: number;
  etag: string | undefined;
}

export interface SetOptions extends WriteOptions {
  ttl?: number;
}

const at = (key: string) => ({ params: { path: { key } } });

export function strings(api: Api) {
  const family = {
    /** The value, or null when the key does not exist. */
    async get(key: string, options: CallOptions = {}): Promise<StringValue | null> {
      const got = await unwrapOrNull(api.GET('/store/string/{key}', { ...at(key), signal: options.signal }));
      if (!got) return null;
      // The route also answers raw bytes (Accept: application/octet-stream); this call asks for JSON.
      const data = got.data as Exclude<typeof got.data, string>;
      return { value: data.value, ttl: data.ttl, etag: got.etag };
    },
    /** Creates or replaces the value; `created` is true when the key was new. */
    async set(key: string, value: string, options: SetOptions = {}) {
      const { data, status, etag } = await unwrap(
        api.POST('/store/string/{key}', {
          ...at(key),
          body: options.ttl === undefined ? { value } : { value, ttl: options.ttl },
          headers: writeHeaders(options),
          signal: options.signal,
        }),
      );
      return { key: data.key, created: status === 201, etag };
    },
    /** Adds `by` (default 1) and answers the exact new value; `ttl` applies when the increment creates the key. */
    async incr(key: string, by = 1, options: WriteOptions & { ttl?: number } = {}): Promise<bigint> {
      const body = options.ttl === undefined ? { by } : { by, ttl: options.ttl };
      const { data } = await unwrap(
        api.POST('/store/string/{key}/incr', { ...at(key), body, headers: writeHeaders(options) }),
      );
      return BigInt(data.value_string);
    },
    async delete(key: string, options: WriteOptions = {}): Promise<boolean> {
      const { data } = await unwrap(
        api.DELETE('/store/string/{key}', {
          ...at(key),
          headers: writeHeaders(options),
          signal: options.signal,
        }),
      );
      return data.deleted;
    },
    async exists(key: string): Promise<boolean> {
      return (await unwrap(api.GET('/store/string/{key}/exists', at(key)))).data.exists;
    },
    /** Remaining seconds (-1: no expiry), or null when the key does not exist. */
    async ttl(key: string): Promise<number | null> {
      return (await unwrapOrNull(api.GET('/store/string/{key}/ttl', at(key))))?.data.ttl ?? null;
    },
    async expire(key: string, ttl: number, options: WriteOptions = {}): Promise<void> {
      await unwrap(
        api.POST('/store/string/{key}/expire', { ...at(key), body: { ttl }, headers: writeHeaders(options) }),
      );
    },
    /**
     * Read-modify-write: `fn` gets the current value (null: no key) and answers the next; written with If-Match, so
     * that a change made in between runs `fn` again on the new value instead of being overwritten.
     */
    update(
      key: string,
      fn: (current: string | null) => string | Promise<string>,
      options: UpdateOptions = {},
    ) {
      let ttl: number | undefined;
      return readModifyWrite(
        async () => {
          const got = await family.get(key, options);
          // A write replaces the whole string, and with it the expiry: keep the one it had.
          ttl = got && got.ttl > 0 ? got.ttl : undefined;
          return got;
        },
        (next, condition) => family.set(key, next, { ...condition, ttl, signal: options.signal }),
        fn,
        options,
      );
    },
  };
  return family;
}
