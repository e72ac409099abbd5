// The batch endpoint of a family: validate every item, build its operation, run all in one atomic script call.
import type { Request, Response } from 'express';
import { ApiError, toApiError } from '../errors';
import type { BatchItem } from '../families/family';
import type { Context } from '../http/context';
import type { Permission } from '../http/contract';
import { idempotencyOf, markReplay } from '../http/idempotency-key';
import type { Routes } from '../http/routes';
import { sendJson } from '../http/send';
import type { Op } from '../ops/op';
import { runBatch } from '../ops/run';

/** Public batch item type -> the operation it runs (the family's `batch` map, see families/family.ts). */
export type BatchItems = ReadonlyMap<string, (item: BatchItem) => Op>;

/** Builds every item's operation before anything runs; an item that can't be built fails the request. */
function build(items: BatchItem[], factories: BatchItems): Op[] {
  return items.map((item, index) => {
    try {
      const factory = factories.get(item.type);
      if (!factory) throw new ApiError('invalid_request', `unknown type '${item.type}'`);
      return factory(item);
    } catch (err) {
      const e = toApiError(err);
      throw new ApiError(e.type, `operations[${index}]: ${e.message}`, { details: { ...e.details, index } });
    }
  });
}

const etag = (value: string | undefined) => (value === undefined ? {} : { etag: value });

/**
 * The permissions a batch needs, read from its raw items' `type`s (before anything is validated): 'write' if an
 * item writes, 'read' if one reads; unknown or missing types count for nothing (validation refuses them later).
 */
function needs(body: unknown, writes: ReadonlyMap<string, boolean>): Set<Permission> {
  const needed = new Set<Permission>();
  const items = (body as { operations?: unknown } | undefined)?.operations;
  if (!Array.isArray(items)) return needed;
  for (const item of items) {
    const w = writes.get((item as { type?: unknown } | null)?.type as string);
    if (w !== undefined) needed.add(w ? 'write' : 'read');
    if (needed.size === 2) break;
  }
  return needed;
}

/** Registers POST {path}: results in request order, a run-time failure fails its item only. */
export function batchRoute(
  routes: Routes,
  ctx: Context,
  path: string,
  factories: BatchItems,
  writes: ReadonlyMap<string, boolean>,
): void {
  // Before validation (which costs time in proportion to the body): a caller without the permission the items'
  // types need gets 403 at once; one with no data permission at all, whatever the body.
  const authorize = (req: Request, res: Response) => {
    const needed = needs(req.body, writes);
    for (const permission of needed) ctx.access.authorize(res, permission, []);
    if (needed.size === 0) {
      try {
        ctx.access.authorize(res, 'read', []);
      } catch {
        ctx.access.authorize(res, 'write', []);
      }
    }
  };
  routes.custom(
    'post',
    path,
    async (input, req, res) => {
      const items = input.body.operations as BatchItem[];
      // The batch's `encoding` is that of every item that names none.
      const { encoding } = input.body;
      const ops = build(encoding ? items.map((item) => ({ encoding, ...item })) : items, factories);
      // Each item needs what its own endpoint needs: read items 'read', write items 'write'.
      const keys = ops.flatMap((op) => op.keys);
      if (ops.some((op) => !op.writes)) ctx.access.authorize(res, 'read', keys);
      if (ops.some((op) => op.writes)) ctx.access.authorize(res, 'write', keys);
      const idem = ops.some((op) => op.writes) ? idempotencyOf(ctx, req, res) : undefined;
      const { outcomes, atomic } = await runBatch(ctx.store, ops, input.body.atomic === 'all', idem).finally(
        () => markReplay(res, idem),
      );
      const results = outcomes.map((outcome, i) => {
        const type = (items[i] as BatchItem).type;
        if (outcome instanceof ApiError) {
          const { type: error, message, status, headers } = outcome;
          // A failed if_match names the key's current ETag, as the header of a single request would.
          return { type, success: false, error: { error, message, status, ...etag(headers?.etag) } };
        }
        return { type, success: true, ...outcome.body, ...etag(outcome.etag) };
      });
      sendJson(res, 200, { results, atomic });
    },
    { authorize },
  );
}
