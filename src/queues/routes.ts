// /store/queues: reliable queues (docs/queues.md). Each route checks the queue name against the caller's prefix.
import type { Request, Response } from 'express';
import type { Context } from '../context';
import type { Idempotency } from '../engine/idempotent';
import { ApiError } from '../errors';
import { clientIdentity } from '../http/client-address';
import type { Method, RequestInput } from '../http/contract';
import type { Routes } from '../http/routes';
import { sendJson } from '../http/send';
import { idempotencyOf, markReplay } from '../routes/idempotency-key';
import { scopedPrefix } from '../routes/keys';
import { abandoned } from '../routes/op-route';
import { watchQueues } from './gauges';
import { configure, describe, names, type PeekState, peek, purge, redrive, remove } from './manage';
import { type MessageInput, type SettleMode, send, settle } from './messages';
import { QueuePoller } from './poller';
import { type ReceiveInput, receive } from './receive';

interface SettleBody {
  receipts: string[];
  delay?: number;
  error?: string;
  visibility_timeout?: number;
}

type Handler = (name: string, input: RequestInput, req: Request, res: Response) => Promise<void>;

export function queueRoutes(routes: Routes, ctx: Context): void {
  const { store } = ctx;
  const clientOf = clientIdentity(ctx.config.ipv6PrefixLength);
  watchQueues(ctx.telemetry.metrics, store);
  const poller = store.waiters
    ? new QueuePoller(store, store.waiters, ctx.config.limits.listMaxWait * 1000)
    : undefined;
  /** Runs a write under the request's Idempotency-Key (if any); a replayed answer says so (Idempotent-Replayed). */
  const once = <T>(req: Request, res: Response, run: (idem?: Idempotency) => Promise<T>): Promise<T> => {
    const idem = idempotencyOf(ctx, req, res);
    return run(idem).finally(() => markReplay(res, idem));
  };
  /** A route on one queue: the caller's permission was checked; here its prefix, against the queue's name. */
  const route = (method: Method, path: string, handler: Handler) => {
    const { permission } = ctx.contract.operation(method, `/store/queues/{queue}${path}`);
    routes.custom(method, `/store/queues/{queue}${path}`, (input, req, res) => {
      const name = input.params.queue as string;
      ctx.access.authorize(res, permission, [name]);
      return handler(name, input, req, res);
    });
  };

  routes.custom('get', '/store/queues', async (input, _req, res) => {
    const prefix = scopedPrefix(res, (input.query.prefix as string | undefined) ?? '');
    const listed = await names(store, prefix, (input.query.limit as number | undefined) ?? 1000);
    sendJson(res, 200, { queues: listed.names, complete: listed.complete });
  });
  route('put', '', async (name, input, req, res) => {
    const { created, settings } = await once(req, res, (idem) =>
      configure(store, name, input.body ?? {}, idem),
    );
    sendJson(res, created ? 201 : 200, { queue: name, created, settings });
  });
  route('get', '', async (name, _input, _req, res) => {
    sendJson(res, 200, { queue: name, ...(await describe(store, name)) });
  });
  route('delete', '', async (name, _input, req, res) => {
    sendJson(res, 200, { queue: name, deleted: await once(req, res, (idem) => remove(store, name, idem)) });
  });
  route('post', '/messages', async (name, input, req, res) => {
    const body = input.body as MessageInput | { messages: MessageInput[] };
    const batch = 'messages' in body;
    const max = ctx.config.limits.maxValueBytes;
    const sent = await once(req, res, (idem) => send(store, name, batch ? body.messages : [body], max, idem));
    sendJson(res, 201, batch ? { messages: sent } : sent[0]);
  });
  route('get', '/messages', async (name, input, _req, res) => {
    const state = (input.query.state as PeekState | undefined) ?? 'ready';
    const limit = (input.query.limit as number | undefined) ?? 10;
    sendJson(res, 200, { messages: await peek(store, name, state, limit) });
  });
  route('post', '/receive', async (name, input, req, res) => {
    if (req.get('idempotency-key') !== undefined)
      throw new ApiError(
        'invalid_request',
        'A receive takes no Idempotency-Key: retry it as it is (the messages a lost answer held come back after their lease)',
      );
    const body = (input.body ?? {}) as ReceiveInput;
    if ((body.wait ?? 0) > ctx.config.queueMaxWait)
      throw new ApiError(
        'invalid_request',
        `wait is ${body.wait} s; at most ${ctx.config.queueMaxWait} s (SVC_QUEUE_MAX_WAIT)`,
      );
    const client = clientOf(req, res);
    const admit = () => {
      if (!store.waiters)
        throw new ApiError('service_unavailable', 'Waiting receives are not available here');
      return store.waiters.admit(client);
    };
    const messages = await receive(store, name, body, { poller, admit, signal: abandoned(res) });
    sendJson(res, 200, { messages });
  });
  const settleRoute = (mode: SettleMode) =>
    route('post', `/${mode}`, async (name, input, req, res) => {
      const { receipts, delay, error, visibility_timeout } = input.body as unknown as SettleBody;
      const seconds = mode === 'extend' ? visibility_timeout : delay;
      const delayMs = seconds === undefined ? undefined : Math.round(seconds * 1000);
      const results = await once(req, res, (idem) =>
        settle(store, name, mode, receipts, { delayMs, error }, idem),
      );
      sendJson(res, 200, { results });
    });
  settleRoute('ack');
  settleRoute('nack');
  settleRoute('extend');
  route('post', '/redrive', async (name, input, req, res) => {
    const body = (input.body ?? {}) as { ids?: string[]; limit?: number };
    sendJson(
      res,
      200,
      await once(req, res, (idem) => redrive(store, name, body.ids, body.limit ?? 1000, idem)),
    );
  });
  route('post', '/purge', async (name, input, req, res) => {
    const what = (input.body?.what as 'all' | 'dead' | undefined) ?? 'all';
    sendJson(res, 200, { purged: await once(req, res, (idem) => purge(store, name, what, idem)) });
  });
}
