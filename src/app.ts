// createApp(deps): the Express apps (data, and admin when it has its own listener); never listens.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import express, { type Express } from 'express';
import type { Config } from './config';
import type { Access, Context } from './http/context';
import { Contract } from './http/contract';
import { errorHandler } from './http/error-handler';
import { requestId } from './http/request-id';
import { fallback, PREFIXES, Routes } from './http/routes';
import type { Logger } from './observability/logger';
import { requestLog } from './observability/request-log';
import { hashOps } from './ops/hashes';
import { setOps } from './ops/sets';
import { stringOps } from './ops/strings';
import type { RedisClient } from './redis/client';
import { createKeyspace } from './redis/keys';
import { hashRoutes } from './routes/hashes';
import { setRoutes } from './routes/sets';
import { stringRoutes } from './routes/strings';

/** openapi.yaml sits at the project root, above src/ (tests) or dist/src/ (built). */
function findUp(name: string, dir = __dirname): string {
  const candidate = join(dir, name);
  if (existsSync(candidate) || dirname(dir) === dir) return candidate;
  return findUp(name, dirname(dir));
}
export const OPENAPI_FILE = findUp('openapi.yaml');

export interface AppDeps {
  config: Config;
  redis: RedisClient;
  logger: Logger;
  /** The loaded contract; loaded from openapi.yaml when not given (tests share one). */
  contract?: Contract;
}

export interface Apps {
  /** Serves the data API, and the admin API when it shares the data port. */
  data: Express;
  /** Serves the admin API when SVC_ADMIN_PORT differs from SVC_PORT. */
  admin?: Express;
  context: Context;
}

const allowAll: Access = { authorize: () => {} };

function baseApp(ctx: Context): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', ctx.config.trustProxy);
  app.use(requestId(ctx.config.requestIdHeader), requestLog(ctx.logger));
  return app;
}

function finish(app: Express, ctx: Context): Express {
  app.use(fallback(ctx.served));
  app.use(errorHandler(ctx.logger, () => ctx.config.errorDetails));
  return app;
}

export function createApp(deps: AppDeps): Apps {
  const { config } = deps;
  const ctx: Context = {
    config,
    redis: deps.redis,
    logger: deps.logger,
    keyspace: createKeyspace(config.keyPrefix),
    contract: deps.contract ?? new Contract(OPENAPI_FILE),
    access: allowAll,
    served: [],
  };
  const data = new Routes(ctx);
  stringRoutes(data, stringOps(config.limits));
  hashRoutes(data, hashOps(config.limits));
  setRoutes(data, setOps());

  const app = baseApp(ctx);
  for (const prefix of PREFIXES) app.use(prefix, data.router);
  return { data: finish(app, ctx), context: ctx };
}
