// The README's promises, checked through the port docker-compose.yml publishes (run by scripts/test-containers.sh
// after `docker compose up --build --wait`): the console, a write and a read, health, metrics, the non-root user and
// the healthcheck, a Redis restart keeping acknowledged writes (AOF volume), and `docker stop` of the gateway under
// a bounded load losing no acknowledged write and answering every request it took. Env: GATEWAY_PORT, COMPOSE_PROJECT.
import { execFile, execFileSync } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';

const PORT = Number(process.env.GATEWAY_PORT);
const PROJECT = process.env.COMPOSE_PROJECT;
const RUN = `ct${Date.now().toString(36)}`;

const compose = (...args) =>
  execFileSync('docker', ['compose', '-p', PROJECT, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
const container = (service) => compose('ps', '-aq', service).trim();
const inspect = (service, format) =>
  execFileSync('docker', ['inspect', '-f', format, container(service)], { encoding: 'utf8' }).trim();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const step = (what) => console.log(`  - ${what}`);

function fail(message) {
  throw new Error(message);
}

/**
 * One request on its own connection (no keep-alive, so that a connection the stopping gateway never took is a
 * refusal, not a reset of a pooled socket): resolves {status, body}, or {error} when no answer came.
 */
function request(method, path, body) {
  return new Promise((resolve) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      {
        host: '127.0.0.1',
        port: PORT,
        method,
        path,
        agent: false,
        timeout: 20000,
        headers: data
          ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) }
          : {},
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        );
        res.on('error', (err) => resolve({ error: err.code ?? err.message, sent: true }));
      },
    );
    let sent = false;
    req.on('finish', () => {
      sent = true;
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err) => resolve({ error: err.code ?? err.message, sent }));
    req.end(data);
  });
}

async function expectStatus(method, path, status, body) {
  const res = await request(method, path, body);
  if (res.status !== status)
    fail(`${method} ${path}: expected ${status}, got ${res.status ?? res.error} ${res.body ?? ''}`);
  return res;
}

/** Polls (no timed assertion) until GET path answers 200, for at most `limitMs`. */
async function until200(path, limitMs) {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const res = await request('GET', path);
    if (res.status === 200) return res;
    if (Date.now() > deadline)
      fail(`GET ${path} did not answer 200 within ${limitMs} ms (last: ${res.status ?? res.error})`);
    await sleep(200);
  }
}

async function untilHealthy(service, limitMs) {
  const deadline = Date.now() + limitMs;
  while (inspect(service, '{{.State.Health.Status}}') !== 'healthy') {
    if (Date.now() > deadline) fail(`${service} did not turn healthy within ${limitMs} ms`);
    await sleep(500);
  }
}

/** Every key in `keys` holds the value it was written with: read back through the gateway, 8 at a time. */
async function expectValues(keys, what) {
  const missing = [];
  for (let i = 0; i < keys.length; i += 8) {
    const answers = await Promise.all(keys.slice(i, i + 8).map((k) => request('GET', `/store/string/${k}`)));
    answers.forEach((res, j) => {
      const key = keys[i + j];
      if (res.status !== 200 || JSON.parse(res.body).value !== key)
        missing.push(`${key} (${res.status ?? res.error})`);
    });
  }
  if (missing.length)
    fail(`${what}: ${missing.length} of ${keys.length} acknowledged writes lost: ${missing.slice(0, 5)}`);
}

async function basics() {
  const root = await expectStatus('GET', '/', 200);
  if (!root.body.includes('/console/')) fail('GET / does not link the console');
  const consolePage = await expectStatus('GET', '/console/', 200);
  if (!String(consolePage.headers['content-type']).startsWith('text/html')) fail('GET /console/ is not HTML');
  await expectStatus('GET', '/docs/', 200);
  step('the console, the docs and the index answer');

  await expectStatus('POST', `/store/string/${RUN}:greeting`, 201, { value: 'hello', ttl: 600 });
  const read = await expectStatus('GET', `/store/string/${RUN}:greeting`, 200);
  if (JSON.parse(read.body).value !== 'hello') fail(`read back ${read.body}`);
  step('a write and a read');

  const health = JSON.parse((await expectStatus('GET', '/store/admin/health', 200)).body);
  if (health.status !== 'healthy' || health.database.status !== 'connected')
    fail(`health: ${JSON.stringify(health)}`);
  const metrics = await expectStatus('GET', '/store/admin/metrics', 200);
  if (!/^# TYPE \w+ /m.test(metrics.body)) fail('metrics are not Prometheus text');
  step('health (Redis connected) and Prometheus metrics');

  const uid = compose('exec', '-T', 'gateway', 'id', '-u').trim();
  if (uid === '0') fail('the gateway runs as root');
  if (inspect('gateway', '{{.State.Health.Status}}') !== 'healthy') fail('the gateway is not healthy');
  if (/protected/i.test(compose('logs', 'redis'))) fail('Redis logged about protected mode');
  const warned = compose('logs', 'gateway').match(/^.*Z (warn|error) .*$/m);
  if (warned) fail(`the gateway logged at start: ${warned[0]}`);
  step(`runs as uid ${uid}, healthy by its own healthcheck, started without a warning`);
}

async function redisRestart() {
  const keys = Array.from({ length: 200 }, (_, i) => `${RUN}:aof:${i}`);
  for (const key of keys) await expectStatus('POST', `/store/string/${key}`, 201, { value: key });
  compose('restart', 'redis');
  await untilHealthy('redis', 60000);
  await until200('/store/admin/health', 60000);
  await expectValues(keys, 'after `docker compose restart redis`');
  step(`docker compose restart redis: all ${keys.length} acknowledged writes read back (AOF on the volume)`);
}

/** Writers on fresh connections until `stop` is set; every 201 is an acknowledged write. */
async function load(state, writers) {
  const worker = async (w) => {
    for (let i = 0; !state.stop; i++) {
      const key = `${RUN}:stop:${w}:${i}`;
      const res = await request('POST', `/store/string/${key}`, { value: key });
      if (res.status === 201) state.acked.push(key);
      else if (res.status !== undefined) state.other.push(`${key}: ${res.status} ${res.body}`);
      else if (res.error === 'ECONNREFUSED') state.refused++;
      else state.unanswered.push({ key, error: res.error });
      if (res.status === undefined) await sleep(20);
    }
  };
  await Promise.all(Array.from({ length: writers }, (_, w) => worker(w)));
}

async function stopUnderLoad() {
  const state = { stop: false, acked: [], other: [], unanswered: [], refused: 0 };
  const running = load(state, 8);
  const loadLimit = setTimeout(() => {
    state.stop = true; // bounded: the load never outlives 60 s
  }, 60000);
  while (state.acked.length < 200) await sleep(50);
  const started = Date.now();
  // Not execFileSync: the writers in this process must go on reading their answers while the gateway stops.
  await promisify(execFile)('docker', ['compose', '-p', PROJECT, 'stop', 'gateway']);
  const stopMs = Date.now() - started;
  await sleep(500);
  state.stop = true;
  clearTimeout(loadLimit);
  await running;

  const exitCode = inspect('gateway', '{{.State.ExitCode}}');
  if (exitCode !== '0')
    fail(`docker stop: the gateway exited with ${exitCode} (137 is SIGKILL after the grace period)`);
  if (!/"stopped"|stopped/.test(compose('logs', '--tail=20', 'gateway')))
    fail('the gateway did not log "stopped"');
  if (state.other.length) fail(`answers other than 201 during the stop: ${state.other.slice(0, 5)}`);

  compose('start', 'gateway');
  await untilHealthy('gateway', 60000);
  await expectValues(state.acked, 'after `docker stop` of the gateway under load');
  // A request with no answer must be one the gateway never took: its write must not have happened.
  const applied = [];
  for (const { key, error } of state.unanswered) {
    const res = await request('GET', `/store/string/${key}`);
    if (res.status !== 404) applied.push(`${key} (${error}: ${res.status})`);
  }
  if (applied.length) fail(`taken but not answered during the stop: ${applied.slice(0, 5)}`);
  step(
    `docker stop under load (8 writers): exit 0 in ${stopMs} ms; ${state.acked.length} acknowledged writes all read ` +
      `back; ${state.refused} refused, ${state.unanswered.length} reset with no answer, none of them applied`,
  );
}

/** Cold start: a new gateway container (Redis already up), from `docker compose up` to the first answer; 3 times. */
async function coldStart() {
  const times = [];
  for (let i = 0; i < 3; i++) {
    compose('rm', '-sf', 'gateway');
    const started = Date.now();
    await promisify(execFile)('docker', ['compose', '-p', PROJECT, 'up', '-d', '--no-build', 'gateway']);
    await until200('/store/admin/ping', 60000);
    times.push(Date.now() - started);
  }
  await until200('/store/admin/health', 60000);
  times.sort((a, b) => a - b);
  step(`cold start (a new container to its first answer): median ${times[1]} ms of ${times.join(', ')} ms`);
}

async function main() {
  if (!PORT || !PROJECT) fail('GATEWAY_PORT and COMPOSE_PROJECT must be set');
  await basics();
  await redisRestart();
  await stopUnderLoad();
  await coldStart();
}

main().catch((err) => {
  console.error(`check failed: ${err.message}`);
  process.exit(1);
});
