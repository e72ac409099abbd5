// client.hashes: named string fields under one key; whole-hash and per-field reads and writes, update(key, fn).
import {
  type Api,
  type CallOptions,
  unwrap,
  unwrapOrNull,
  type WriteOptions,
  writeHeaders,
} from './transport.js';
import { readModifyWrite, type UpdateOptions } from './update.js';

export type Fields = Record<string, string>;

export interface HashValue {
  fields: Fields;
  ttl: number;
  etag: string | undefined;
}

export interface HashSetOptions extends WriteOptions {
  ttl?: number;
  /** `merge` (default) adds the fields to the others; `replace` makes the hash hold exactly these. */
  mode?: 'merge' | 'replace';
}

const at = (key: string) => ({ params: { path: { key } } });
const atField = (key: string, field: string) => ({ params: { path: { key, field } } });

export function hashes(api: Api) {
  const family = {
    /** Every field, or null when the key does not exist. */
    async get(key: string, options: CallOptions = {}): Promise<HashValue | null> {
      const got = await unwrapOrNull(api.GET('/store/hash/{key}', { ...at(key), signal: options.signal }));
      return got && { fields: got.data.fields, ttl: got.data.ttl, etag: got.etag };
    },
    async set(key: string, fields: Fields, options: HashSetOptions = {}) {
      const { ttl, mode } = options;
      const { data, status, etag } = await unwrap(
        api.POST('/store/hash/{key}', {
          ...at(key),
          body: { fields, ...(ttl === undefined ? {} : { ttl }), ...(mode === undefined ? {} : { mode }) },
          headers: writeHeaders(options),
          signal: options.signal,
        }),
      );
      return { created: status === 201, fieldsCount: data.fields_count, etag };
    },
    /** One field's value, or null when the key or the field does not exist. */
    async getField(key: string, field: string): Promise<string | null> {
      const got = await unwrapOrNull(api.GET('/store/hash/{key}/field/{field}', atField(key, field)), [
        'not_found',
        'field_not_found',
      ]);
      return got?.data.value ?? null;
    },
    async setField(key: string, field: string, value: string, options: WriteOptions = {}) {
      const { status, etag } = await unwrap(
        api.POST('/store/hash/{key}/field/{field}', {
          ...atField(key, field),
          body: { value },
          headers: writeHeaders(options),
        }),
      );
      return { created: status === 201, etag };
    },
    async deleteField(key: string, field: string, options: WriteOptions = {}): Promise<boolean> {
      const { data } = await unwrap(
        api.DELETE('/store/hash/{key}/field/{field}', {
          ...atField(key, field),
          headers: writeHeaders(options),
        }),
      );
      return data.deleted;
    },
    /** Adds `by` to a field and answers the exact new value. */
    async incrField(key: string, field: string, by = 1, options: WriteOptions = {}): Promise<bigint> {
      const { data } = await unwrap(
        api.POST('/store/hash/{key}/field/{field}/incr', {
          ...atField(key, field),
          body: { by },
          headers: writeHeaders(options),
        }),
      );
      return BigInt(data.value_string);
    },
    async delete(key: string, options: WriteOptions = {}): Promise<boolean> {
      const { data } = await unwrap(
        api.DELETE('/store/hash/{key}', { ...at(key), headers: writeHeaders(options) }),
      );
      return data.deleted;
    },
    async expire(key: string, ttl: number, options: WriteOptions = {}): Promise<void> {
      await unwrap(
        api.POST('/store/hash/{key}/expire', { ...at(key), body: { ttl }, headers: writeHeaders(options) }),
      );
    },
    /** Read-modify-write of the whole hash (written back with `mode: replace` under If-Match; its TTL kept). */
    update(
      key: string,
      fn: (current: Fields | null) => Fields | Promise<Fields>,
      options: UpdateOptions = {},
    ) {
      let ttl: number | undefined;
      return readModifyWrite(
        async () => {
          const got = await family.get(key, options);
          ttl = got && got.ttl > 0 ? got.ttl : undefined;
          return got && { value: got.fields, etag: got.etag };
        },
        (next, condition) => family.set(key, next, { ...condition, mode: 'replace', ttl }),
        fn,
        options,
      );
    },
  };
  return family;
}
