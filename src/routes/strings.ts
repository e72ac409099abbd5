// String routes: /store/string/... mapped onto the string operations.
import type { Context } from '../http/context';
import type { RequestInput } from '../http/contract';
import type { Routes } from '../http/routes';
import type { StringOps, StringSetInput } from '../ops/strings';
import { batchRoute } from './batch';

const key = (input: RequestInput) => ({ key: input.params.key as string });
/** `If-None-Match: *` makes a create conditional: nothing is written when the key exists. */
export const ifAbsent = (input: RequestInput) => input.headers['if-none-match'] === '*';

export function stringRoutes(routes: Routes, ctx: Context, ops: StringOps): void {
  batchRoute(routes, ctx, '/store/string/batch', ops);
  routes.op('get', '/store/string/{key}', (input) => ops.get(key(input)));
  routes.op('post', '/store/string/{key}', (input) =>
    ops.set({ ...(input.body as Omit<StringSetInput, 'key'>), ...key(input), ifAbsent: ifAbsent(input) }),
  );
  routes.op('delete', '/store/string/{key}', (input) => ops.delete(key(input)));
  routes.op('get', '/store/string/{key}/exists', (input) => ops.exists(key(input)));
  routes.op('get', '/store/string/{key}/ttl', (input) => ops.ttl(key(input)));
  routes.op('delete', '/store/string/{key}/ttl', (input) => ops.persist(key(input)));
  routes.op('post', '/store/string/{key}/expire', (input) =>
    ops.expire({ ...key(input), ttl: input.body.ttl as number }),
  );
}
