// SVC_WORKERS > 1: the primary forks workers that share the port, replaces crashed ones, and relays signals.
import cluster, { type Worker } from 'node:cluster';
import { withServiceEnv, withServiceFlags } from './node-flags';
import type { Logger } from './observability/logger';
import { relayQuestions } from './peers';

/** A worker that crashes sooner than this after it started listening is restarted after a pause, not at once. */
const QUICK_CRASH_MS = 5_000;
const RESTART_PAUSE_MS = 1_000;

export interface Supervisor {
  /** Asks every worker to stop (they drain their connections); resolves when all have exited. */
  stop(signal: NodeJS.Signals): Promise<void>;
  /** Relays SIGHUP (reload the configuration) to every worker. */
  reload(): void;
}

/**
 * Forks `count` workers running this same script (node:cluster shares the listening port between them),
 * and relays the admin questions between them (peers.ts).
 * A worker that dies unexpectedly after it served is replaced; one that dies before it ever listened
 * (a port in use, a broken install) is not, so a worker that cannot start does not loop for ever.
 * `onEmpty` runs when no worker is left outside of stop() (every worker failed to start).
 */
export function superviseWorkers(options: {
  count: number;
  logger: Logger;
  /** After stop(), workers still running this long later are killed. */
  killAfterMs: number;
  onEmpty: () => void;
}): Supervisor {
  const { count, logger, killAfterMs, onEmpty } = options;
  let stopping: Promise<void> | undefined;
  const listeningSince = new Map<Worker, number>();

  const fork = () => {
    const worker = cluster.fork(withServiceEnv(process.env));
    logger.info('worker started', { pid: worker.process.pid });
  };

  cluster.on('listening', (worker) => {
    if (!listeningSince.has(worker)) listeningSince.set(worker, Date.now());
  });
  cluster.on('exit', (worker, code, signal) => {
    const since = listeningSince.get(worker);
    listeningSince.delete(worker);
    if (stopping) return;
    const fields = { pid: worker.process.pid, code, signal };
    if (since === undefined) {
      logger.error('worker exited before it could serve; not restarting it', fields);
      if (Object.keys(cluster.workers ?? {}).length === 0) onEmpty();
      return;
    }
    const pause = Date.now() - since < QUICK_CRASH_MS ? RESTART_PAUSE_MS : 0;
    logger.warn('worker exited unexpectedly; restarting it', { ...fields, pause_ms: pause });
    setTimeout(() => stopping || fork(), pause);
  });

  const live = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
  // Admin questions (stats, metrics, clients, reload) go to the workers that serve, not one still starting.
  relayQuestions(
    (asker) => live().filter((w) => w !== asker && listeningSince.has(w) && w.isConnected()),
    logger,
  );

  // Workers run with the service's V8 options and malloc settings even when the primary was started without them
  // (node-flags.ts).
  cluster.setupPrimary({ execArgv: withServiceFlags(process.execArgv) });
  for (let i = 0; i < count; i++) fork();
  return {
    stop(signal) {
      stopping ??= new Promise<void>((resolve) => {
        const check = () => live().length === 0 && resolve();
        cluster.on('exit', check);
        // Each worker runs the single-process shutdown: stop accepting, drain, quit Redis, exit 0.
        for (const worker of live()) worker.process.kill(signal);
        setTimeout(() => {
          for (const worker of live()) worker.process.kill('SIGKILL');
        }, killAfterMs).unref();
        check();
      });
      return stopping;
    },
    reload() {
      for (const worker of live()) worker.process.kill('SIGHUP');
    },
  };
}

/** The primary process: supervises the workers, relays SIGTERM/SIGINT/SIGHUP, exits 0 once all are gone. */
export function runPrimary(count: number, logger: Logger, shutdownTimeoutMs: number): void {
  logger.info('starting workers', { workers: count, pid: process.pid });
  const supervisor = superviseWorkers({
    count,
    logger,
    // Workers bound their own drain by the shutdown timeout; this only catches one that hangs after it.
    killAfterMs: shutdownTimeoutMs + 5_000,
    onEmpty: () => {
      logger.error('no worker could start');
      process.exit(1);
    },
  });
  const stop = (signal: NodeJS.Signals) => {
    logger.info('shutting down workers', { signal });
    void supervisor.stop(signal).then(() => {
      logger.info('stopped');
      process.exit(0);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => supervisor.reload());
}
