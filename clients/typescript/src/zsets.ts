// client.zsets: members with scores (a leaderboard): add, read by rank or by score range.
import type { components } from './schema.js';
import {
  type Api,
  type CallOptions,
  unwrap,
  unwrapOrNull,
  type WriteOptions,
  writeHeaders,
} from './transport.js';

export type Score = components['schemas']['Score'];
export type ScoredMember = components['schemas']['ScoredMember'];

const at = (key: string) => ({ params: { path: { key } } });
/** Query flags are the strings `true` and `false`. */
const bool = (flag: boolean | undefined) =>
  flag === undefined ? undefined : flag ? ('true' as const) : ('false' as const);

export function zsets(api: Api) {
  return {
    /** Adds or re-scores members (`{alice: 4200, bob: 3100}`). */
    async add(key: string, members: Record<string, Score>, options: WriteOptions & { ttl?: number } = {}) {
      const { ttl } = options;
      const { data, etag } = await unwrap(
        api.POST('/store/zset/{key}', {
          ...at(key),
          body: { members, ...(ttl === undefined ? {} : { ttl }) },
          headers: writeHeaders(options),
        }),
      );
      return { added: data.added, updated: data.updated, cardinality: data.cardinality, etag };
    },
    /** Members by rank (lowest score first; `rev`: highest first), a page of `limit` from `offset`; null: no key. */
    async get(key: string, options: CallOptions & { offset?: number; limit?: number; rev?: boolean } = {}) {
      const { offset, limit, rev } = options;
      const got = await unwrapOrNull(
        api.GET('/store/zset/{key}', {
          params: { path: { key }, query: { offset, limit, rev: bool(rev) } },
          signal: options.signal,
        }),
      );
      return got && { members: got.data.members, more: got.data.more, ttl: got.data.ttl, etag: got.etag };
    },
    /** Members whose scores lie within `min`..`max` (`(` before a bound: exclusive), a page at a time. */
    async range(
      key: string,
      options: CallOptions & {
        min?: string | number;
        max?: string | number;
        rev?: boolean;
        offset?: number;
        limit?: number;
      } = {},
    ): Promise<{ members: ScoredMember[]; more: boolean }> {
      const { min, max, rev, offset, limit } = options;
      const query = { min: min?.toString(), max: max?.toString(), rev: bool(rev), offset, limit };
      const got = await unwrapOrNull(
        api.GET('/store/zset/{key}/range', { params: { path: { key }, query }, signal: options.signal }),
      );
      return got ? { members: got.data.members, more: got.data.more } : { members: [], more: false };
    },
    async remove(key: string, members: string[], options: WriteOptions = {}): Promise<number> {
      const { data } = await unwrap(
        api.POST('/store/zset/{key}/remove', {
          ...at(key),
          body: { members },
          headers: writeHeaders(options),
        }),
      );
      return data.removed;
    },
    async delete(key: string, options: WriteOptions = {}): Promise<boolean> {
      const { data } = await unwrap(
        api.DELETE('/store/zset/{key}', { ...at(key), headers: writeHeaders(options) }),
      );
      return data.deleted;
    },
  };
}
