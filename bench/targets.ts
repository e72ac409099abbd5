// Starts what the benchmark measures: the service (production-like settings) and the baselines.
import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SERVICE_ENV, withServiceFlags } from '../src/node-flags';
import { freePort } from '../tests/support/redis-server';
import { drive, type LoadOptions, type RequestSpec } from './load';
import { answers, type ServerProcess, startServer } from './processes';
import { STRING_KEY, VALUE } from './scenarios';

export interface Target {
  readonly server: ServerProcess;
  readonly url: string;
  /** Headers every request carries (the API key). */
  readonly headers: Record<string, string>;
}

/** Drives `t` with `spec`, adding the headers every request to it carries (the API key). */
export const driveTarget = (t: Target, spec: RequestSpec, opts: LoadOptions) =>
  drive(t.url, { ...spec, headers: { ...spec.headers, ...t.headers } }, t.server.pid, opts);

const MAIN = path.join(__dirname, '..', 'src', 'main.js');
/** Only PATH from the caller's environment: a stray SVC_* variable must not change what is measured. */
const baseEnv = () => ({ PATH: process.env.PATH ?? '', NODE_ENV: 'production' });

export const API_KEY = randomBytes(24).toString('hex');
const AUTH = { authorization: `Bearer ${API_KEY}` };

export interface ServiceOptions {
  redisUrl: string;
  workers: number;
  /** The request log (JSON lines at info level, as in production); also tells when every worker listens. */
  logFile: string;
  nodeArgs?: string[];
  /** The service's entry point: this build's dist/src/main.js unless given (another build, for A/B runs). */
  main?: string;
  /** SVC_* settings that override the production-like ones below (experiments: `--set`). */
  settings?: Record<string, string>;
}

/**
 * The service as it runs in production: API keys on, rate limiting on (with a limit far above the load, so
 * every request pays for the counter round trip but none is refused), metrics on, JSON request logs at info.
 */
export async function startService(opts: ServiceOptions): Promise<Target> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // Every worker logs 'listening' at info; with a quieter log (--set SVC_LOG_LEVEL=warn) the first answer
  // has to do, and then a second worker may still be starting during the warm-up.
  const logsListening = ['info', 'debug'].includes(opts.settings?.SVC_LOG_LEVEL ?? 'info');
  const listening = async () =>
    logsListening
      ? existsSync(opts.logFile) &&
        readFileSync(opts.logFile, 'utf8').split('"message":"listening"').length - 1 >= opts.workers
      : answers(url);
  const server = await startServer({
    name: `service (SVC_WORKERS=${opts.workers})`,
    // Started as npm start starts it: with the service's V8 options (unless nodeArgs sets the same ones).
    command: [process.execPath, ...withServiceFlags(opts.nodeArgs ?? [], ''), opts.main ?? MAIN],
    logFile: opts.logFile,
    env: {
      ...baseEnv(),
      // As npm start sets them (its caller's environment could override them; the bench passes none of it).
      ...SERVICE_ENV,
      SVC_HOST: '127.0.0.1',
      SVC_PORT: String(port),
      SVC_ADMIN_PORT: String(port),
      SVC_WORKERS: String(opts.workers),
      SVC_REDIS_URL: opts.redisUrl,
      SVC_API_KEYS: JSON.stringify({
        keys: [{ id: 'bench', key: API_KEY, permissions: ['read', 'write', 'admin'] }],
      }),
      SVC_RATE_LIMIT_ENABLED: 'true',
      SVC_RATE_LIMIT_REQUESTS: '1000000000',
      SVC_RATE_LIMIT_WINDOW: '60',
      SVC_METRICS_ENABLED: 'true',
      SVC_LOG_LEVEL: 'info',
      SVC_LOG_FORMAT: 'json',
      ...opts.settings,
    },
    ready: listening,
  });
  return { server, url, headers: AUTH };
}

async function startNode(name: string, script: string, env: Record<string, string>): Promise<Target> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = await startServer({
    name,
    command: [process.execPath, path.join(__dirname, script)],
    env: { ...baseEnv(), PORT: String(port), ...env },
    ready: () => answers(`${url}/store/string/${STRING_KEY}`),
  });
  return { server, url, headers: AUTH };
}

/** (a) Express 5, fixed JSON, no Redis. */
export const startExpressBaseline = () =>
  startNode('baseline (a) express', 'baseline-express.js', { BENCH_VALUE: VALUE });

/** (b) node:http + ioredis. */
export const startNodeBaseline = (redisUrl: string) =>
  startNode('baseline (b) node:http + ioredis', 'baseline-node.js', { REDIS_URL: redisUrl });

export function onPath(binary: string): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
    try {
      accessSync(path.join(dir, binary), constants.X_OK);
      return !!dir;
    } catch {
      return false;
    }
  });
}

/** (c) Webdis (C, HTTP to Redis); its GET path is /GET/<key>. Only when `webdis` is on the PATH. */
export async function startWebdis(redisPort: number, dir: string): Promise<Target> {
  const port = await freePort();
  const config = path.join(dir, 'webdis.json');
  writeFileSync(
    config,
    JSON.stringify({
      redis_host: '127.0.0.1',
      redis_port: redisPort,
      http_host: '127.0.0.1',
      http_port: port,
      threads: 2,
      pool_size: 20,
      daemonize: false,
      websockets: false,
      database: 0,
      verbosity: 0,
      logfile: '/dev/null',
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const server = await startServer({
    name: 'baseline (c) webdis',
    command: ['webdis', config],
    env: baseEnv(),
    ready: () => answers(`${url}/GET/${STRING_KEY}`),
  });
  return { server, url, headers: {} };
}
