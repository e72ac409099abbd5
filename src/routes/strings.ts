// String routes: /store/string/... mapped onto the string operations.
import type { RequestInput } from '../http/contract';
import type { Routes } from '../http/routes';
import type { StringSetInput, stringOps } from '../ops/strings';

const key = (input: RequestInput) => ({ key: input.params.key as string });
/** `If-None-Match: *` makes a create conditional: nothing is written when the key exists. */
export const ifAbsent = (input: RequestInput) => input.headers['if-none-match'] === '*';

export function stringRoutes(routes: Routes, ops: ReturnType<typeof stringOps>): void {
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
