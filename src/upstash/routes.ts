// The Upstash-compatible endpoint's routes (/upstash, /pipeline, /multi-exec, path form, subscriptions) and answers.
import { randomUUID } from 'node:crypto';
import express, {
  type ErrorRequestHandler,
  type Express,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import type { Context } from '../context';
import { ApiError, toApiError } from '../errors';
import { principalOf } from '../http/auth/access';
import { clientIdentity } from '../http/client-address';
import type { Permission } from '../http/contract';
import { refuseFormBody } from '../http/form-bodies';
import { methodNotAllowed } from '../http/routes';
import { sendJson, sendJsonText } from '../http/send';
import { runPipeline, runTransaction } from './batch';
import { encodeBase64 } from './encoding';
import { deletesEach } from './events';
import { exactCounter, jsonText } from './integers';
import { type Planned, plan } from './plan';
import { type Item, type Runner, runOne } from './run';
import { ScriptFlags } from './shebang';
import { subscribe } from './subscribe';
import { CommandTable } from './table';

export const UPSTASH_PATHS = [
  '/upstash',
  '/upstash/pipeline',
  '/upstash/multi-exec',
  '/upstash/{path}',
] as const;

type Arg = string | number | boolean;

const isArg = (v: unknown): v is Arg =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** A command as the SDK sends it: a non-empty JSON array of strings, numbers and booleans (coerced to strings). */
function command(value: unknown, where = 'the body'): string[] {
  if (!Array.isArray(value) || value.length === 0 || !value.every(isArg))
    throw new ApiError(
      'invalid_request',
      `ERR ${where} must be a non-empty JSON array of strings and numbers`,
    );
  return value.map(String);
}

function parse(text: unknown): unknown {
  if (typeof text !== 'string' || text === '')
    throw new ApiError('invalid_request', 'ERR the body must hold a command');
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError('invalid_request', 'ERR the body is not valid JSON');
  }
}

function commands(text: unknown, max: number): string[][] {
  const value = parse(text);
  if (!Array.isArray(value) || value.length === 0)
    throw new ApiError('invalid_request', 'ERR the body must be a non-empty JSON array of commands');
  if (value.length > max)
    throw new ApiError(
      'invalid_request',
      `ERR ${value.length} commands; at most ${max} (SVC_BATCH_MAX_OPERATIONS)`,
    );
  return value.map((c, i) => command(c, `command ${i + 1}`));
}

/**
 * SVC_REDIS_MAX_ARGUMENTS: a command longer than the server takes is refused before anything of the request runs.
 * A pipeline's commands each go on their own, so only each one's length counts.
 */
function refuseLong(planned: Planned[], max: number): void {
  const index = max > 0 ? planned.findIndex((p) => p.args.length > max) : -1;
  if (index < 0) return;
  const words = (planned[index] as Planned).args.length;
  throw new ApiError(
    'invalid_request',
    `ERR command ${index + 1} has ${words} arguments; the server takes at most ${max} (SVC_REDIS_MAX_ARGUMENTS)`,
  );
}

export function upstashRoutes(
  app: Express,
  ctx: Context,
  guards: RequestHandler,
  /** Admits pipelines and transactions a few at a time, before their body is read (http/admission.ts). */
  heavy: RequestHandler,
): void {
  let table: Promise<CommandTable> | undefined;
  const loadTable = () => {
    table ??= CommandTable.load(ctx.redis).catch((err: unknown) => {
      table = undefined;
      throw err;
    });
    return table;
  };
  const shebangs = new ScriptFlags();
  const boot = randomUUID().slice(0, 8);
  let writes = 0;
  /**
   * After a write, the number of that write (concurrent writes of one client each get their own token, as the SDK
   * expects); otherwise the latest write's.
   */
  const syncToken = (res: Response) => `${boot}-${res.locals.upstashWrite ?? writes}`;
  const body = express.text({ type: () => true, limit: ctx.config.limits.maxBodyBytes });
  // The path form's value as sent: bytes read as UTF-8, a leading byte-order mark kept (express.text drops it).
  const valueBody = express.raw({ type: () => true, limit: ctx.config.limits.maxBodyBytes });

  const clientOf = clientIdentity(ctx.config.ipv6PrefixLength);
  const runner = (req: Request, res: Response): Runner => ({
    client: clientOf(req, res),
    store: ctx.store,
    prefix: ctx.keyspace.prefix + (principalOf(res)?.prefix ?? ''),
    maxWait: ctx.config.limits.listMaxWait,
    budget: { elements: ctx.config.limits.maxReplyElements, bytes: ctx.config.limits.maxReplyBytes },
    wrote: () => {
      res.locals.upstashWrite = ++writes;
    },
  });
  /** Plans every command and checks the caller may run them all before anything runs. */
  const planAll = async (req: Request, res: Response, raw: string[][]): Promise<[Runner, Planned[]]> => {
    const r = runner(req, res);
    const t = await loadTable();
    const tenant = (principalOf(res)?.prefix ?? '') !== '';
    const scripts = ctx.config.upstash.scriptPermission;
    const planned = raw.map((c) => {
      const p = plan(t, c, r.prefix, tenant, scripts);
      return exactCounter(ctx.store.changes ? deletesEach(p) : p);
    });
    refuseLong(planned, ctx.config.redis.maxArguments);
    let needed: Permission = 'read';
    const counts = new Map<string, number>();
    for (const p of planned) {
      shebangs.rewrite(p.name, p.args);
      if (p.permission === 'admin' || (p.permission === 'write' && needed === 'read')) needed = p.permission;
      counts.set(p.name, (counts.get(p.name) ?? 0) + 1);
    }
    ctx.access.authorize(res, needed, []);
    // A form POST is one page away (its Origin is refused first; http/browsers.ts); `curl -d` with a token is not.
    if (needed !== 'read') refuseFormBody(req, 'A write through /upstash', true);
    for (const [name, count] of counts) ctx.telemetry.metrics.upstashCommand(name, count);
    return [r, planned];
  };
  const answer = (req: Request, res: Response, value: Item | Item[]) => {
    // The items are this request's own: their results are encoded in place.
    if (req.headers['upstash-encoding'] === 'base64')
      for (const item of [value].flat()) if ('result' in item) item.result = encodeBase64(item.result);
    res.setHeader('upstash-sync-token', syncToken(res));
    if (!Array.isArray(value) && 'error' in value) {
      res.locals.errorType = 'invalid_request';
      return sendJson(res, 400, value);
    }
    sendJsonText(res, 200, jsonText(value));
  };
  const one = async (req: Request, res: Response, raw: string[]) => {
    const [r, [planned]] = await planAll(req, res, [raw]);
    res.locals.route = `/upstash/${(planned as Planned).name}`;
    answer(req, res, await runOne(r, planned as Planned, abandoned(res)));
  };
  const named =
    (route: string): RequestHandler =>
    (_req, res, next) => {
      res.locals.route = route;
      next();
    };

  app.post('/upstash', named('/upstash'), guards, body, (req, res) =>
    one(req, res, command(parse(req.body))),
  );
  app.post('/upstash/pipeline', named('/upstash/pipeline'), guards, heavy, body, async (req, res) => {
    const [r, planned] = await planAll(req, res, commands(req.body, ctx.config.limits.batchMaxOperations));
    answer(req, res, await runPipeline(r, planned));
  });
  app.post('/upstash/multi-exec', named('/upstash/multi-exec'), guards, heavy, body, async (req, res) => {
    const [r, planned] = await planAll(req, res, commands(req.body, ctx.config.limits.batchMaxOperations));
    answer(req, res, await runTransaction(r, planned));
  });
  const pathForm: RequestHandler = async (req, res) => {
    const segments = [(req.params as { path: string[] }).path].flat();
    const kind = segments[0]?.toLowerCase();
    if (kind === 'subscribe' || kind === 'psubscribe') {
      res.locals.route = `/upstash/${kind}`;
      ctx.access.authorize(res, 'read', []);
      res.setHeader('upstash-sync-token', syncToken(res));
      const r = runner(req, res);
      await subscribe(res, ctx.store.waiters, segments.slice(1), kind === 'psubscribe', r.prefix, r.client);
      return;
    }
    const raw = [...segments];
    if (req.method === 'POST' && Buffer.isBuffer(req.body) && req.body.length > 0)
      raw.push(req.body.toString('utf8'));
    await one(req, res, raw);
  };
  app.get('/upstash/*path', named('/upstash/{path}'), guards, pathForm);
  app.post('/upstash/*path', named('/upstash/{path}'), guards, valueBody, pathForm);
  // Other methods: 405 with Allow, after the guards (middleware, not routes: the contract lists the routes).
  const fixed = new Set(['/', '/pipeline', '/multi-exec']);
  app.use('/upstash', named('/upstash'), guards, (req) => {
    const path = req.baseUrl + (req.path === '/' ? '' : req.path);
    throw methodNotAllowed(
      { method: req.method, path } as Request,
      fixed.has(req.path) ? ['POST'] : ['GET', 'POST'],
    );
  });
  app.use('/upstash', upstashErrors(ctx, syncToken));
}

/** Aborted when the client goes away before its answer (a blocking command then gives its connection up). */
function abandoned(res: Response): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** Errors as the SDK reads them: `{"error": "<text>"}` with the status; Retry-After kept on 429 and 503. */
function upstashErrors(ctx: Context, syncToken: (res: Response) => string): ErrorRequestHandler {
  return (err: unknown, _req, res, _next) => {
    const apiError = toApiError(err);
    res.locals.route ??= '/upstash';
    res.locals.errorType = apiError.type;
    if (apiError.status >= 500) res.locals.failure = apiError.type === 'server_error' ? err : apiError.cause;
    if (res.headersSent) {
      ctx.logger.error('request failed after its headers were sent', {
        request_id: res.locals.requestId,
        err,
      });
      res.destroy();
      return;
    }
    if (apiError.headers)
      for (const [name, value] of Object.entries(apiError.headers)) res.setHeader(name, value);
    if (apiError.retryAfter !== undefined) res.setHeader('Retry-After', String(apiError.retryAfter));
    res.setHeader('upstash-sync-token', syncToken(res));
    sendJson(res, apiError.status, { error: apiError.message });
  };
}
