// What the routes of every family share: the path key, the conditional headers, and the whole-key endpoints.
import type { RequestInput } from '../http/contract';
import type { Routes } from '../http/routes';
import type { keyOps } from '../ops/keys';

export const pathKey = (input: RequestInput) => ({ key: input.params.key as string });
/** `If-None-Match: *` makes a create conditional: nothing is written when the key (field, member) exists. */
export const ifAbsent = (input: RequestInput) => input.headers['if-none-match'] === '*';
/** `If-Match: *` makes a field or member delete insist that there is something to delete. */
export const ifPresent = (input: RequestInput) => input.headers['if-match'] === '*';

/** DELETE of the whole key, ttl, remove-expiry and expire: the same for strings, hashes and sets. */
export function keyRoutes(
  routes: Routes,
  family: 'string' | 'hash' | 'set',
  ops: ReturnType<typeof keyOps>,
): void {
  const path = `/store/${family}/{key}`;
  routes.op('delete', path, (input) => ops.delete(pathKey(input)));
  routes.op('get', `${path}/ttl`, (input) => ops.ttl(pathKey(input)));
  routes.op('delete', `${path}/ttl`, (input) => ops.persist(pathKey(input)));
  routes.op('post', `${path}/expire`, (input) =>
    ops.expire({ ...pathKey(input), ttl: input.body.ttl as number }),
  );
}
