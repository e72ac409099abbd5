// The process: config -> logger -> service (redis, apps) -> listen; signals; the only process.exit (and cluster.ts's).
import cluster from 'node:cluster';
import { runPrimary } from './cluster';
import { type Config, ConfigError, loadConfig } from './config';
import { limitHeapHeadroom } from './heap-headroom';
import { listen } from './http/server';
import { applyRuntimeFlags } from './node-flags';
import { createLogger, flushLogs } from './observability/logger';
import { joinPeers } from './peers';
import { redactUrl, redisMode } from './redis/client';
import { RedisTlsError } from './redis/tls';
import { createService } from './service';
import { startupFailure } from './startup';

/** Set once the configuration loaded, so that a failed start can name the setting to change. */
let loaded: Config | undefined;

async function main(): Promise<void> {
  // The headroom adjusts the growth factor the service set; an operator's own --heap-growing-percent is left alone.
  if (applyRuntimeFlags().some((flag) => flag.startsWith('--heap-growing-percent='))) limitHeapHeadroom();
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  loaded = config;
  const logger = createLogger(config.log);
  // With SVC_WORKERS > 1 this process only supervises; each worker runs the rest of main() itself.
  if (config.workers > 1 && cluster.isPrimary)
    return runPrimary(config.workers, logger, config.shutdownTimeoutMs);
  // A worker's admin figures cover the other workers too; the link is idle outside of admin requests.
  const service = createService(config, { logger, peers: cluster.isWorker ? joinPeers() : undefined });
  const { redis } = service;
  // Each new cause is logged once (a wrong password would otherwise hide behind 503s); repeats of it at debug.
  let lastCause = '';
  redis.on('error', (err: Error) => {
    logger.log(err.message === lastCause ? 'debug' : 'warn', 'redis connection error', {
      cause: err.message,
    });
    lastCause = err.message;
  });
  redis.on('ready', () => {
    lastCause = '';
  });
  const target = redisMode(config) === 'standalone' ? redactUrl(config.redis.url) : redisMode(config);
  try {
    await service.connect();
    logger.info('connected to redis', { redis: target });
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    // A certificate problem does not go away by retrying: the start fails with its reason (startup.ts).
    if (err instanceof RedisTlsError) throw err;
    logger.warn('redis is not reachable yet; answering 503 until it is', {
      redis: target,
      cause: (err as Error).message,
    });
  }
  const servers = [await listen(service.data, service.context, config.port, config.host)];
  logger.info('listening', { host: config.host, port: config.port });
  if (service.admin) {
    servers.push(await listen(service.admin, service.context, config.admin.port, config.admin.host));
    logger.info('admin listening', { host: config.admin.host, port: config.admin.port });
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    // Change feed streams never end by themselves: they get their close reason first, then the listeners close.
    await service.context.feed?.close();
    await Promise.all(servers.map((s) => s.close(config.shutdownTimeoutMs)));
    await service.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // The reload logs what it applied, or (a warning) why it kept the running configuration.
  process.on('SIGHUP', () => {
    service.context.reload().catch(() => {});
  });
}

// The reason is the last line: the log lines of the steps that did succeed go out first.
main().catch((err) => {
  flushLogs();
  process.stderr.write(`${startupFailure(err, loaded)}\n`);
  process.exit(err instanceof ConfigError ? 2 : 1);
});
