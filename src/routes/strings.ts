// String routes: /store/string/... mapped onto the string operations.
import type { Context } from '../http/context';
import type { Routes } from '../http/routes';
import type { StringOps, StringSetInput } from '../ops/strings';
import { batchRoute } from './batch';
import { ifAbsent, keyRoutes, pathKey } from './keys';

export function stringRoutes(routes: Routes, ctx: Context, ops: StringOps): void {
  batchRoute(routes, ctx, '/store/string/batch', ops);
  routes.op('get', '/store/string/{key}', (input) => ops.get(pathKey(input)));
  routes.op('post', '/store/string/{key}', (input) =>
    ops.set({ ...(input.body as Omit<StringSetInput, 'key'>), ...pathKey(input), ifAbsent: ifAbsent(input) }),
  );
  routes.op('get', '/store/string/{key}/exists', (input) => ops.exists(pathKey(input)));
  keyRoutes(routes, 'string', ops);
}
