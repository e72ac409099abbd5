// Set routes: /store/set/... mapped onto the set operations.

import type { Context } from '../http/context';
import type { RequestInput } from '../http/contract';
import type { Routes } from '../http/routes';
import type { AlgebraInput, SetAddInput, SetOps } from '../ops/sets';
import { batchRoute } from './batch';
import { ifAbsent, ifPresent, keyRoutes, pathKey } from './keys';

const pathMember = (input: RequestInput) => ({ ...pathKey(input), member: input.params.member as string });

export function setRoutes(routes: Routes, ctx: Context, ops: SetOps): void {
  batchRoute(routes, ctx, '/store/set/batch', ops);
  // Registered before POST /store/set/{key}: `union`, `intersection`, `difference` are reserved segments.
  for (const name of ['union', 'intersection', 'difference'] as const) {
    routes.op('post', `/store/set/${name}`, (input) => ops[name](input.body as unknown as AlgebraInput));
  }
  const set = '/store/set/{key}';
  const member = `${set}/member/{member}`;
  routes.op('get', set, (input) => ops.get(pathKey(input)));
  routes.op('post', set, (input) =>
    ops.add({ ...(input.body as Omit<SetAddInput, 'key'>), ...pathKey(input), ifAbsent: ifAbsent(input) }),
  );
  routes.op('post', member, (input) => ops.addMember({ ...pathMember(input), ifAbsent: ifAbsent(input) }));
  routes.op('delete', member, (input) =>
    ops.removeMember({ ...pathMember(input), ifPresent: ifPresent(input) }),
  );
  routes.op('get', `${member}/exists`, (input) => ops.isMember(pathMember(input)));
  routes.op('get', `${set}/cardinality`, (input) => ops.cardinality(pathKey(input)));
  routes.op('post', `${set}/pop`, (input) => ops.pop(pathKey(input)));
  keyRoutes(routes, 'set', ops);
}
