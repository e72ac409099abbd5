// client.sets: unique string members under one key.
import {
  type Api,
  type CallOptions,
  unwrap,
  unwrapOrNull,
  type WriteOptions,
  writeHeaders,
} from './transport.js';

const at = (key: string) => ({ params: { path: { key } } });
const atMember = (key: string, member: string) => ({ params: { path: { key, member } } });

export function sets(api: Api) {
  return {
    /** Every member (in no order), or null when the key does not exist. */
    async get(key: string, options: CallOptions = {}) {
      const got = await unwrapOrNull(api.GET('/store/set/{key}', { ...at(key), signal: options.signal }));
      return got && { members: got.data.members, ttl: got.data.ttl, etag: got.etag };
    },
    /** Adds members (`mode: replace`: the set holds exactly these); `added` counts the new ones. */
    async add(
      key: string,
      members: string[],
      options: WriteOptions & { ttl?: number; mode?: 'merge' | 'replace' } = {},
    ) {
      const { ttl, mode } = options;
      const { data, etag } = await unwrap(
        api.POST('/store/set/{key}', {
          ...at(key),
          body: { members, ...(ttl === undefined ? {} : { ttl }), ...(mode === undefined ? {} : { mode }) },
          headers: writeHeaders(options),
        }),
      );
      return { added: data.added, count: data.members_count, etag };
    },
    async remove(key: string, member: string, options: WriteOptions = {}): Promise<boolean> {
      const { data } = await unwrap(
        api.DELETE('/store/set/{key}/member/{member}', {
          ...atMember(key, member),
          headers: writeHeaders(options),
        }),
      );
      return data.removed;
    },
    async has(key: string, member: string): Promise<boolean> {
      return (await unwrap(api.GET('/store/set/{key}/member/{member}/exists', atMember(key, member)))).data
        .exists;
    },
    async delete(key: string, options: WriteOptions = {}): Promise<boolean> {
      const { data } = await unwrap(
        api.DELETE('/store/set/{key}', { ...at(key), headers: writeHeaders(options) }),
      );
      return data.deleted;
    },
  };
}
