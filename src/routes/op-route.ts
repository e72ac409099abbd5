// A route whose work is one operation (see ops/): checks the permission on its keys, runs it, answers.
import type { Response } from 'express';
import type { Context } from '../context';
import { runOp } from '../engine/run';
import { clientIdentity } from '../http/client-address';
import type { Method, RequestInput } from '../http/contract';
import type { Routes } from '../http/routes';
import { sendBytes, sendJson, sendTagged } from '../http/send';
import type { Op } from '../ops/op';
import { idempotencyOf, markReplay } from './idempotency-key';

export function opRoute(
  routes: Routes,
  ctx: Context,
  method: Method,
  path: string,
  build: (input: RequestInput) => Op,
): void {
  const { permission } = ctx.contract.operation(method, path);
  // Who a wait counts against (SVC_LIST_MAX_WAITERS_PER_CLIENT): a credential, else an address.
  const clientOf = clientIdentity(ctx.config.ipv6PrefixLength);
  routes.custom(method, path, async (input, req, res) => {
    const op = build(input);
    ctx.access.authorize(res, permission, op.keys);
    const idem = op.writes ? idempotencyOf(ctx, req, res) : undefined;
    const waits = op.whenEmpty !== undefined;
    const ifNoneMatch = input.headers['if-none-match'];
    // The operation holds what the request said: its body (a 64 KiB upload, say) need not stay in memory while Redis
    // answers, nor after the answer until the connection's next request (Node keeps a connection's last request).
    req.body = undefined;
    const outcome = await runOp(
      ctx.store,
      op,
      waits ? abandoned(res) : undefined,
      idem,
      waits ? clientOf(req, res) : undefined,
    ).finally(() => markReplay(res, idem));
    if (outcome.bytes) sendBytes(res, outcome, ifNoneMatch);
    else if (outcome.etag === undefined) sendJson(res, outcome.status, outcome.body);
    else sendTagged(res, outcome, method === 'get' ? ifNoneMatch : undefined);
  });
}

/** Aborted when the client goes away before its answer was sent (only operations that may wait ask for it). */
export function abandoned(res: Response): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}
