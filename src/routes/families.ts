// Registers the data families' routes: each family's batch endpoint, then its routes in declaration order.

import type { Context } from '../context';
import { FAMILIES } from '../families';
import type { Routes } from '../http/routes';
import type { Limits } from '../ops/op';
import { batchRoute } from './batch';
import { opRoute } from './op-route';

export function familyRoutes(routes: Routes, ctx: Context, limits: Limits): void {
  for (const family of FAMILIES) {
    // The operations ask the latest probe what the server lacks (a hash field's TTL), as they are built.
    const bound = family.bind({ ...limits, capabilities: () => ctx.capabilities.current });
    batchRoute(routes, ctx, family.batchPath, bound.batch, bound.writes, family.name === 'string');
    for (const route of bound.routes) opRoute(routes, ctx, route.method, route.path, route.build);
  }
}
