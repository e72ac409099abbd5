// Throwaway redis-server processes on loopback ports, for the test harness and for outage, Sentinel and Cluster tests.
//
//   const server = await startRedisServer();           // free port, no persistence
//   await server.stop();                               // SIGTERM; resolves once the process has exited
//   await server.start();                              // the same port, args and data dir again
//   await server.kill();                               // SIGKILL: a crash rather than a shutdown
//
// `args` go after the defaults, so they override them (e.g. ['--appendonly', 'yes']); `config` is written to a
// config file passed first, which Sentinel needs (`{ args: ['--sentinel'], config: 'sentinel monitor ...' }`).
// Each server has its own data dir (AOF, nodes.conf, sentinel state, pid file) that survives stop/start; it is
// created under TEST_REDIS_TMPDIR, where the jest global teardown kills any server a test forgot to stop (see
// killServersUnder) before removing it all. `tls` serves TLS only (tests/support/tls.ts): the url is then rediss://.
// TEST_REDIS_SERVER names the server command (default redis-server): scripts/engines.sh's wrappers run Redis 8 and
// Valkey (docs/testing.md, "Every engine").
import { type ChildProcess, spawn } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pingTls, type TlsServerOptions, tlsServerArgs } from './tls';

export const LOOPBACK = '127.0.0.1';
const READY_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 10_000;
/** The server command: redis-server, or an engine's wrapper (scripts/engines.sh). */
export const REDIS_SERVER = process.env.TEST_REDIS_SERVER || 'redis-server';
/** Redis 8 refuses a cluster port above this (its bus port is the port + 10000). */
const CLUSTER_MAX_PORT = 55535;

export interface RedisServerOptions {
  /** Fixed port; by default a free one is picked (and another tried if it is taken in the meantime). */
  port?: number;
  /** Extra redis-server arguments, after the defaults. */
  args?: string[];
  /** Config file text, for directives that must live in a file (Sentinel). */
  config?: string;
  /** Serve TLS only (`--port 0 --tls-port`), with these certificates. */
  tls?: TlsServerOptions;
}

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  /** The server's --dir. */
  readonly dir: string;
  /** Starts it again on the same port after stop() or kill(); a no-op while it runs. */
  start(): Promise<void>;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

/** Servers and the clients that watch them, started one by one and stopped together (a Cluster, a Sentinel set). */
export function fleet<Client extends { disconnect(): void }>() {
  const servers: RedisServer[] = [];
  const clients: Client[] = [];
  const stop = async () => {
    for (const c of clients) c.disconnect();
    await Promise.all(servers.map((s) => s.stop()));
  };
  return { servers, clients, stop };
}

/** A port nobody listens on right now (the OS picks it; it may be taken again before use), at most `max`. */
export async function freePort(max = 65535): Promise<number> {
  for (;;) {
    const port = await anyFreePort();
    if (port <= max) return port;
  }
}

function anyFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** True when the server command (REDIS_SERVER) is an executable, as a path or on the PATH. */
export function hasRedisServer(): boolean {
  const candidates = REDIS_SERVER.includes('/')
    ? [REDIS_SERVER]
    : (process.env.PATH ?? '')
        .split(path.delimiter)
        .filter((dir) => dir)
        .map((dir) => path.join(dir, REDIS_SERVER));
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {}
  }
  return false;
}

/** Sends a raw `PING` and returns the first reply line (`+PONG`, `-NOAUTH ...`, `-LOADING ...`), or null. */
export function pingRaw(port: number, host = LOOPBACK, timeoutMs = 1000): Promise<string | null> {
  return new Promise((resolve) => {
    let reply = '';
    const socket = net.connect({ host, port });
    const done = (line: string | null) => {
      socket.destroy();
      resolve(line);
    };
    socket.setTimeout(timeoutMs, () => done(null));
    socket.once('error', () => done(null));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      const end = reply.indexOf('\r\n');
      if (end >= 0) done(reply.slice(0, end));
    });
    socket.once('end', () => done(null));
  });
}

/** Resolves when the process has exited, or failed to start (ENOENT gives 'error' and maybe no 'exit'). */
function exitOf(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => child.pid === undefined && resolve());
  });
}

/**
 * SIGKILLs every redis-server still running from a data dir under `root`, found by the pid files they write
 * (a clean shutdown removes its own). Jest sandboxes `process`, so an exit hook in a test file never runs.
 */
export function killServersUnder(root: string): void {
  if (!existsSync(root)) return;
  for (const entry of readdirSync(root)) {
    const pidFile = path.join(root, entry, 'redis.pid');
    if (!existsSync(pidFile)) continue;
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    try {
      // Guard against a reused pid where /proc tells (Linux).
      if (
        existsSync('/proc') &&
        !/(redis|valkey)-(server|check-rdb)/.test(readFileSync(`/proc/${pid}/cmdline`, 'latin1'))
      )
        continue;
      process.kill(pid, 'SIGKILL');
    } catch {} // already gone
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitReady(
  port: number,
  exited: Promise<void>,
  argv: string[],
  tls: TlsServerOptions | undefined,
): Promise<void> {
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const reply = await (tls ? pingTls(port, LOOPBACK, tls.pki, 500) : pingRaw(port, LOOPBACK, 500));
    // -NOAUTH: it runs with a password, and answers.
    if (reply === '+PONG' || reply?.startsWith('-NOAUTH')) return;
    if (gone)
      throw new Error(
        `redis-server exited before answering PING on port ${port}: ${REDIS_SERVER} ${argv.join(' ')}`,
      );
    await sleep(50);
  }
  throw new Error(`redis-server did not answer PING on port ${port} within ${READY_TIMEOUT_MS} ms`);
}

/** Spawns redis-server and resolves once it answers PING; see the file header for the returned handle. */
export async function startRedisServer(opts: RedisServerOptions = {}): Promise<RedisServer> {
  const root = process.env.TEST_REDIS_TMPDIR ?? os.tmpdir();
  mkdirSync(root, { recursive: true });
  const dir = mkdtempSync(path.join(root, 'redis-'));
  const configFile = path.join(dir, 'redis.conf');
  writeFileSync(configFile, opts.config ?? '');

  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const launch = async (port: number) => {
    // Otherwise the readiness check below would take that server for ours.
    if ((await pingRaw(port, LOOPBACK, 300)) !== null) throw new Error(`port ${port} already answers PING`);
    const listen = opts.tls ? tlsServerArgs(port, opts.tls) : ['--port', String(port)];
    const argv = [configFile, ...listen, '--bind', LOOPBACK, '--save', '', '--appendonly', 'no'];
    argv.push(
      '--daemonize',
      'no',
      '--dir',
      dir,
      '--pidfile',
      path.join(dir, 'redis.pid'),
      ...(opts.args ?? []),
    );
    const proc = spawn(REDIS_SERVER, argv, { stdio: 'ignore' });
    // Unreferenced, so a server a test forgot to stop does not keep jest alive; the teardown kills it.
    proc.unref();
    const spawnError = new Promise<never>((_, reject) => {
      proc.once('error', (err: NodeJS.ErrnoException) =>
        reject(err.code === 'ENOENT' ? new Error(`${REDIS_SERVER} is not on the PATH`) : err),
      );
    });
    spawnError.catch(() => {});
    child = proc;
    exited = exitOf(proc);
    try {
      await Promise.race([waitReady(port, exited, argv, opts.tls), spawnError]);
    } catch (err) {
      await end('SIGKILL');
      throw err;
    }
  };

  const end = async (signal: NodeJS.Signals) => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return exited;
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };

  const maxPort = opts.args?.includes('--cluster-enabled') ? CLUSTER_MAX_PORT : 65535;
  let port = opts.port ?? (await freePort(maxPort));
  for (let attempt = 1; ; attempt++) {
    try {
      await launch(port);
      break;
    } catch (err) {
      // Another process may have taken the free port between freePort() and redis-server binding it.
      if (opts.port !== undefined || attempt >= 3 || !hasRedisServer()) throw err;
      port = await freePort(maxPort);
    }
  }

  return {
    url: `${opts.tls ? 'rediss' : 'redis'}://${LOOPBACK}:${port}`,
    port,
    dir,
    start: async () => {
      if (child && child.exitCode === null && child.signalCode === null) return;
      await launch(port);
    },
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
  };
}
