// Registers the data families' routes: each family's batch endpoint, then its routes in declaration order.

import { FAMILIES } from '../families';
import type { Context } from '../http/context';
import type { Routes } from '../http/routes';
import type { Limits } from '../ops/op';
import { batchRoute } from './batch';

export function familyRoutes(routes: Routes, ctx: Context, limits: Limits): void {
  for (const family of FAMILIES) {
    const bound = family.bind(limits);
    batchRoute(routes, ctx, family.batchPath, bound.batch, bound.writes);
    for (const route of bound.routes) routes.op(route.method, route.path, route.build);
  }
}
