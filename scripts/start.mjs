// `npm start`: installs and builds when needed, finds or starts a Redis, then runs the service and relays signals.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { installReason, NPM_CI } from './deps.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);

const MAIN = 'dist/src/main.js';
const BUILD_INPUTS = [
  'src',
  'openapi.yaml',
  'tsconfig.json',
  'tsconfig.build.json',
  'console',
  'clients/typescript/src',
];
const DATA_DIR = path.join(root, '.data', 'redis');
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];

let current = null; // the child that signals go to: npm ci, the build, then the service
let stopping = false; // a signal came while no child ran: start nothing more
let localRedis = null; // the redis-server this script started, if any
const lastRelayed = new Map();

const say = (line) => console.log(`[start] ${line}`);
const fail = (text) => {
  console.error(`[start] ${text}`);
  return stopLocalRedis().then(() => process.exit(1));
};
const alive = (child) => child !== null && child.exitCode === null && child.signalCode === null;
const exitCodeOf = (code, signal) => code ?? 128 + (os.constants.signals[signal] ?? 0);

for (const signal of SIGNALS) {
  process.on(signal, () => {
    if (!current) {
      // Between steps (waiting for the local Redis): nothing to relay to, so stop here.
      if (!stopping) void stopLocalRedis().then(() => process.exit(exitCodeOf(null, signal)));
      stopping = true;
      return;
    }
    // Under `npm start`, one Ctrl-C reaches this script twice (from the terminal and from npm): relay it once.
    const now = Date.now();
    if (now - (lastRelayed.get(signal) ?? 0) < 1000) return;
    lastRelayed.set(signal, now);
    current.kill(signal);
  });
}
process.on('exit', () => {
  if (alive(current)) current.kill('SIGTERM');
  if (alive(localRedis)) localRedis.kill('SIGTERM');
});

/** Runs a command with inherited stdio; resolves with its exit code (never, once stopping). */
function run(command, args, options = {}) {
  return new Promise((resolve) => {
    if (stopping) return;
    const child = spawn(command, args, { stdio: 'inherit', ...options });
    current = child;
    child.once('error', (err) => {
      console.error(`[start] cannot run ${command}: ${err.message}`);
      current = null;
      resolve(1);
    });
    child.once('exit', (code, signal) => {
      current = null;
      resolve(exitCodeOf(code, signal));
    });
  });
}

function newestMtime(file) {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...fs.readdirSync(file).map((name) => newestMtime(path.join(file, name))));
}

function onPath(command) {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  return dirs.some((dir) => {
    try {
      fs.accessSync(path.join(dir, command), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * Sends PING and reads the first reply line. `answered`: any Redis reply, `-NOAUTH` and `-LOADING` included;
 * `silent`: a connection but no Redis reply in time; `unreachable`: no connection (nothing listens there).
 */
function probe({ host, port, useTls }, timeoutMs = 1000) {
  return new Promise((resolve) => {
    let buffer = '';
    const socket = useTls
      ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host, rejectUnauthorized: false })
      : net.connect({ host, port });
    let connected = false;
    const done = (state, reply = '') => {
      socket.destroy();
      resolve({ state, reply });
    };
    socket.setTimeout(timeoutMs, () => done(connected ? 'silent' : 'unreachable'));
    socket.once('error', () => done(connected ? 'silent' : 'unreachable'));
    socket.once('connect', () => {
      connected = true;
    });
    socket.once(useTls ? 'secureConnect' : 'connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      const end = buffer.indexOf('\r\n');
      if (end < 0) return;
      const reply = buffer.slice(0, end);
      done(/^[+-]/.test(reply) ? 'answered' : 'silent', reply);
    });
    socket.once('end', () => done('silent'));
  });
}

function parseRedisUrl(text) {
  let url;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') return null;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1';
  const shown = new URL(url);
  shown.password = '';
  shown.username = '';
  return {
    host,
    port: Number(url.port || 6379),
    useTls: url.protocol === 'rediss:',
    username: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    shown: shown.href.replace(/\/$/, ''),
    loopback: host === 'localhost' || host === '::1' || /^127\./.test(host),
  };
}

const quote = (text) => `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** Starts redis-server for `target` with its data in .data/redis; resolves once it answers PING. */
async function startLocalRedis(target) {
  fs.mkdirSync(DATA_DIR, { recursive: true });
  // Credentials from the URL go into a private config file rather than onto the command line.
  const auth = [];
  if (target.password) auth.push(`requirepass ${quote(target.password)}`);
  if (target.password && target.username && target.username !== 'default') {
    auth.push(`user ${quote(target.username)} on ${quote(`>${target.password}`)} ~* &* +@all`);
  }
  const configFile = path.join(DATA_DIR, 'auth.conf');
  fs.writeFileSync(configFile, `${auth.join('\n')}\n`, { mode: 0o600 });
  fs.chmodSync(configFile, 0o600);
  const bind = target.host === 'localhost' ? ['127.0.0.1', '-::1'] : [target.host];
  const logFile = path.join(DATA_DIR, 'redis.log');
  const args = [configFile, '--port', String(target.port), '--bind', ...bind, '--dir', DATA_DIR];
  args.push('--appendonly', 'yes', '--save', '', '--daemonize', 'no', '--logfile', logFile);

  // Its own process group, so a Ctrl-C does not stop Redis under requests the service is still finishing.
  localRedis = spawn('redis-server', args, { stdio: 'ignore', detached: true });
  let exited = false;
  localRedis.once('exit', () => {
    exited = true;
  });
  localRedis.once('error', () => {
    exited = true;
  });
  const deadline = Date.now() + 30_000; // an append-only file takes a while to load
  while (Date.now() < deadline && !exited) {
    const { state, reply } = await probe(target, 500);
    if (state === 'answered' && !reply.startsWith('-LOADING')) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

function stopLocalRedis() {
  const child = localRedis;
  if (!alive(child)) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

const NO_REDIS_WAYS = [
  'Any one of these works:',
  '  - install Redis, and npm start runs it for you: apt-get install -y redis-server (Debian/Ubuntu),',
  '    brew install redis (macOS)',
  '  - set SVC_REDIS_URL to a Redis you can reach, e.g. SVC_REDIS_URL=redis://redis.example:6379 npm start',
  '  - with Docker: docker compose up (runs the service and Redis together)',
].join('\n');

async function ensureRedis() {
  if (process.env.SVC_REDIS_SENTINELS || process.env.SVC_REDIS_CLUSTER_NODES) return;
  const target = parseRedisUrl(process.env.SVC_REDIS_URL || DEFAULT_REDIS_URL);
  if (!target) return; // the service's config check names the problem with the URL
  const { state } = await probe(target);
  if (state === 'answered') return;

  if (!target.loopback || target.useTls) {
    say(
      `no Redis answered at ${target.shown}; starting anyway: the service answers 503 until it can reach it`,
    );
    return;
  }
  if (state === 'silent') {
    await fail(
      `something at ${target.host}:${target.port} accepts connections but does not answer PING as Redis; ` +
        'stop it, or set SVC_REDIS_URL to where your Redis is',
    );
  }
  if (!onPath('redis-server')) {
    await fail(
      `no Redis answered at ${target.shown}, and there is no redis-server on the PATH.\n${NO_REDIS_WAYS}`,
    );
  }
  const shownDir = `./${path.relative(root, DATA_DIR)}`;
  if (!(await startLocalRedis(target))) {
    await fail(`the local redis-server did not come up on port ${target.port}; see ${shownDir}/redis.log`);
  }
  say(`no Redis answered at ${target.shown}; started a local redis-server (data in ${shownDir})`);
  localRedis.once('exit', (code, signal) => {
    if (current)
      say(`the local redis-server stopped (${signal ?? `code ${code}`}); see ${shownDir}/redis.log`);
  });
}

async function main() {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const npmOptions = { shell: process.platform === 'win32' };
  const reason = installReason();
  if (reason) {
    say(`${reason}: npm ci`);
    const code = await run(npm, NPM_CI, npmOptions);
    if (code !== 0) process.exit(code);
  }
  const built = newestMtime(MAIN);
  if (built === 0 || built < Math.max(...BUILD_INPUTS.map(newestMtime))) {
    say(`${MAIN} is missing or older than the sources: npm run build`);
    const code = await run(npm, ['run', '--silent', 'build'], npmOptions);
    if (code !== 0) process.exit(code);
  }
  await ensureRedis();

  // With the service's V8 options and malloc settings (src/node-flags.ts; NODE_OPTIONS and the environment can set
  // others, or the same with other values).
  const { withServiceEnv, withServiceFlags } = await import(
    pathToFileURL(path.join(root, 'dist/src/node-flags.js')).href
  );
  // Its own process group, so that each signal reaches it once, relayed by the handlers above.
  const code = await run(process.execPath, [...withServiceFlags([]), MAIN], {
    env: withServiceEnv(process.env),
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
  });
  await stopLocalRedis();
  process.exit(code);
}

main().catch(async (err) => {
  await fail(err?.stack ?? String(err));
});
