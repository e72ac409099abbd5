// The batch endpoint of a family: validate every item, build its operation, run all in one atomic script call.
import type { Request, Response } from 'express';
import type { Context } from '../context';
import type { Idempotency } from '../engine/idempotent';
import { replyError } from '../engine/replies';
import { type BatchOutcome, runBatch, runSets } from '../engine/run';
import { ApiError, toApiError } from '../errors';
import type { BatchItem } from '../families/family';
import type { Permission } from '../http/contract';
import type { Routes } from '../http/routes';
import { sendJson } from '../http/send';
import type { Op } from '../ops/op';
import { idempotencyOf, markReplay } from './idempotency-key';

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

/** An item that failed, as its result says why. A failed if_match names the key's current ETag, as a header would. */
function failure(type: string | undefined, { type: error, message, status, headers }: ApiError) {
  const etag = headers?.etag;
  return {
    type,
    success: false,
    error: etag === undefined ? { error, message, status } : { error, message, status, etag },
  };
}

/** Runs the batch and answers its results in request order: an item that failed says why. */
async function answer(
  ctx: Context,
  res: Response,
  ops: Op[],
  types: string[],
  all: boolean,
  idem: Idempotency | undefined,
): Promise<void> {
  let batch: BatchOutcome;
  try {
    batch = await runBatch(ctx.store, ops, all, idem);
  } finally {
    markReplay(res, idem);
  }
  const { outcomes, atomic } = batch;
  const results = outcomes.map((outcome, i) => {
    const type = types[i];
    if (outcome instanceof ApiError) return failure(type, outcome);
    const result = { type, success: true, ...outcome.body };
    return outcome.etag === undefined ? result : { ...result, etag: outcome.etag };
  });
  sendJson(res, 200, { results, atomic });
}

interface PlainSets {
  keys: string[];
  values: string[];
}

/**
 * The keys and values of a string batch of plain sets (items of only `type: "set"`, `key` and `value`; no batch
 * `encoding`, `atomic: "all"` or Idempotency-Key), the common bulk write, or undefined. These run without an
 * operation built per item (answerSets); anything else, and a value long enough that its size must be counted,
 * takes the general path, which answers the same for such items.
 */
function plainSets(
  req: Request,
  body: Record<string, unknown>,
  maxValueBytes: number,
): PlainSets | undefined {
  if (body.encoding !== undefined || body.atomic === 'all' || req.headers['idempotency-key'] !== undefined)
    return undefined;
  const items = body.operations as BatchItem[];
  const keys = new Array<string>(items.length);
  const values = new Array<string>(items.length);
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as BatchItem;
    let fields = 0;
    for (const _ in item) fields++;
    const { type, key, value } = item as { type: string; key: string; value: string };
    // checkValueSize's own shortcut (ops/op.ts): UTF-8 takes at most 3 bytes per UTF-16 code unit.
    if (fields !== 3 || type !== 'set' || value.length * 3 > maxValueBytes) return undefined;
    keys[i] = key;
    values[i] = value;
  }
  return { keys, values };
}

/** Runs plain sets (plainSets) and answers their results, as the general path's `answer` would. */
async function answerSets(ctx: Context, res: Response, { keys, values }: PlainSets): Promise<void> {
  const { replies, atomic } = await runSets(ctx.store, keys, values);
  const results = replies.map((reply, i) => {
    const key = keys[i] as string;
    if (!(reply instanceof Error)) return { type: 'set', success: true, key };
    // As the general path settles a refused set (engine/run.ts settle): a client error fails its item only.
    const error = replyError(reply, { name: 'typedWrite', keys: [key], args: ['string'] });
    if (error.status >= 500) throw error;
    return failure('set', error);
  });
  sendJson(res, 200, { results, atomic });
}

/**
 * Registers POST {path}: results in request order, a run-time failure fails its item only. `sets`: the path is the
 * string family's, whose batches of plain sets take answerSets.
 */
export function batchRoute(
  routes: Routes,
  ctx: Context,
  path: string,
  factories: BatchItems,
  writes: ReadonlyMap<string, boolean>,
  sets = false,
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
    (input, req, res) => {
      const plain = sets ? plainSets(req, input.body, ctx.config.limits.maxValueBytes) : undefined;
      if (plain) {
        ctx.access.authorize(res, 'write', plain.keys);
        req.body = undefined;
        return answerSets(ctx, res, plain);
      }
      const items = input.body.operations as BatchItem[];
      // The batch's `encoding` is that of every item that names none.
      const { encoding } = input.body;
      const ops = build(encoding ? items.map((item) => ({ encoding, ...item })) : items, factories);
      // Each item needs what its own endpoint needs: read items 'read', write items 'write'.
      let reads = false;
      let writes = false;
      const keys: string[] = [];
      for (const op of ops) {
        if (op.writes) writes = true;
        else reads = true;
        for (const key of op.keys) keys.push(key);
      }
      if (reads) ctx.access.authorize(res, 'read', keys);
      if (writes) ctx.access.authorize(res, 'write', keys);
      const idem = writes ? idempotencyOf(ctx, req, res) : undefined;
      const types = items.map((item) => item.type);
      const all = input.body.atomic === 'all';
      // The operations hold what the items said: the parsed body need not stay in memory while Redis answers,
      // nor after the answer until the connection's next request (Node keeps a connection's last request).
      req.body = undefined;
      return answer(ctx, res, ops, types, all, idem);
    },
    { authorize, heavy: true },
  );
}
