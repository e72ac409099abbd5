// What the families share: the path key, the conditional headers, the whole-key routes and their batch items.
import type { RequestInput } from '../http/contract';
import type { keyOps } from '../ops/keys';
import type { FamilyRoute } from './family';

export const pathKey = (input: RequestInput) => ({ key: input.params.key as string });
/** The path key with a page's `cursor` and `limit` from the query (hash and set reads; see ops/pages.ts). */
export const pageKey = (input: RequestInput) => ({
  key: input.params.key as string,
  cursor: input.query.cursor as string | undefined,
  limit: input.query.limit as number | undefined,
});
/** A JSON body's fields with the path's key: the input of a write that takes its options in the body. */
export const bodyKey = <T>(input: RequestInput) => ({ ...(input.body as Omit<T, 'key'>), ...pathKey(input) });
/** `If-None-Match: *` makes a create conditional: nothing is written when the key (field, member) exists. */
export const ifAbsent = (input: RequestInput) => input.headers['if-none-match'] === '*';
/** `If-Match: *` makes a field or member delete insist that there is something to delete. */
export const ifPresent = (input: RequestInput) => input.headers['if-match'] === '*';

type KeyOps = ReturnType<typeof keyOps>;

/** DELETE of the whole key, ttl, remove-expiry and expire: the same for every family. */
export const KEY_ROUTES: readonly FamilyRoute<KeyOps>[] = [
  { method: 'delete', path: '/{key}', op: 'delete', input: pathKey },
  { method: 'get', path: '/{key}/ttl', op: 'ttl', input: pathKey },
  { method: 'delete', path: '/{key}/ttl', op: 'persist', input: pathKey },
  {
    method: 'post',
    path: '/{key}/expire',
    op: 'expire',
    input: (i) => ({ ...pathKey(i), ttl: i.body.ttl as number }),
  },
];

/** The batch items of the whole-key operations, named as in every family's batch. */
export const KEY_BATCH = {
  delete: 'delete',
  exists: 'exists',
  ttl: 'ttl',
  expire: 'expire',
  persist: 'persist',
} as const satisfies Record<string, keyof KeyOps>;
