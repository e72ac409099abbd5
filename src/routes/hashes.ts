// Hash routes: /store/hash/... mapped onto the hash operations.

import type { Context } from '../http/context';
import type { RequestInput } from '../http/contract';
import type { Routes } from '../http/routes';
import type { HashOps, HashSetInput } from '../ops/hashes';
import { batchRoute } from './batch';
import { ifAbsent, ifPresent, keyRoutes, pathKey } from './keys';

const pathField = (input: RequestInput) => ({ ...pathKey(input), field: input.params.field as string });

export function hashRoutes(routes: Routes, ctx: Context, ops: HashOps): void {
  batchRoute(routes, ctx, '/store/hash/batch', ops);
  const hash = '/store/hash/{key}';
  const field = `${hash}/field/{field}`;
  routes.op('get', hash, (input) => ops.get(pathKey(input)));
  routes.op('post', hash, (input) =>
    ops.set({ ...(input.body as Omit<HashSetInput, 'key'>), ...pathKey(input), ifAbsent: ifAbsent(input) }),
  );
  routes.op('get', field, (input) => ops.getField(pathField(input)));
  routes.op('post', field, (input) =>
    ops.setField({ ...pathField(input), value: input.body.value as string, ifAbsent: ifAbsent(input) }),
  );
  routes.op('delete', field, (input) =>
    ops.deleteField({ ...pathField(input), ifPresent: ifPresent(input) }),
  );
  routes.op('get', `${hash}/keys`, (input) => ops.keys(pathKey(input)));
  routes.op('get', `${hash}/values`, (input) => ops.values(pathKey(input)));
  routes.op('get', `${hash}/exists`, (input) => ops.exists(pathKey(input)));
  keyRoutes(routes, 'hash', ops);
}
