// Baseline (b): plain node:http + ioredis doing the same Redis work as the service with the same batching (GET and
// PTTL sent together, one SET, one GET for /upstash): what one process can do with no framework, and what Redis spends
// on a request from a plain client (the bench's `redis µs/req` of its rows; issue 36's Redis targets read against it).
// Auto-pipelining is on, as in the service, so the difference between the two is the HTTP layer and middleware.
// It also answers the batch scenario (POST /store/string/batch) at the least cost of an atomic, type-checked batch
// with this stack: one script call with the keys and values as its arguments, `SET key value GET` each (a key of
// another type fails its own set and changes nothing), no validation, auth, limits or logs. A MULTI ... EXEC of the
// same commands costs ioredis ~10 µs of CPU per command (65-72k ops/s here); an MSET, which checks no type and
// answers no result per key, ~220-240k. The floor the batch target is read against on a given machine.
import http from 'node:http';
import Redis from 'ioredis';
import { defineSetEach, setEach } from './set-each';

const PREFIX = '/store/string/';
const BATCH = '/store/string/batch';
const redis = new Redis(process.env.REDIS_URL as string, { enableAutoPipelining: true });

function answer(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

const unavailable = (res: http.ServerResponse) => () => answer(res, 503, { error: 'service_unavailable' });

interface SetItem {
  key: string;
  value: string;
}

defineSetEach(redis);

function batch(req: http.IncomingMessage, res: http.ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let operations: SetItem[];
    try {
      ({ operations } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { operations: SetItem[] });
    } catch {
      return answer(res, 400, { error: 'invalid_request' });
    }
    setEach(
      redis,
      operations.map((o) => o.key),
      operations.map((o) => o.value),
    ).then((done) => {
      const results = operations.map((o, i) => ({ type: 'set', success: done[i] === 1, key: o.key }));
      answer(res, 200, { results, atomic: true });
    }, unavailable(res));
  });
}

/** A request's body, parsed as JSON (undefined when it is not). */
function jsonBody(req: http.IncomingMessage, then: (body: unknown) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    try {
      then(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    } catch {
      then(undefined);
    }
  });
}

/** POST /store/string/{key}: one SET (no type check, no ETag, no event): the plain-client row of POST string. */
function set(req: http.IncomingMessage, res: http.ServerResponse, key: string): void {
  jsonBody(req, (body) => {
    const value = (body as { value?: unknown } | undefined)?.value;
    if (typeof value !== 'string') return answer(res, 400, { error: 'invalid_request' });
    redis.set(key, value).then(() => answer(res, 200, { success: true, key }), unavailable(res));
  });
}

/** POST /upstash ["GET", key]: one GET, its value in base64 (Upstash-Encoding): the row of Upstash GET. */
function upstashGet(req: http.IncomingMessage, res: http.ServerResponse): void {
  jsonBody(req, (body) => {
    const [name, key] = Array.isArray(body) ? body : [];
    if (String(name).toUpperCase() !== 'GET') return answer(res, 400, { error: 'only GET' });
    redis
      .getBuffer(String(key))
      .then(
        (value) => answer(res, 200, { result: value === null ? null : value.toString('base64') }),
        unavailable(res),
      );
  });
}

http
  .createServer((req, res) => {
    if (req.method === 'POST' && req.url === BATCH) return batch(req, res);
    if (req.method === 'POST' && req.url === '/upstash') return upstashGet(req, res);
    if (!req.url?.startsWith(PREFIX)) return answer(res, 404, { error: 'unknown' });
    const key = decodeURIComponent(req.url.slice(PREFIX.length));
    if (req.method === 'POST') return set(req, res, key);
    if (req.method !== 'GET') return answer(res, 404, { error: 'unknown' });
    // The value and its TTL, sent together (auto-pipelined): what a typed GET needs of Redis.
    Promise.all([redis.get(key), redis.pttl(key)]).then(([value, pttl]) => {
      if (value === null) return answer(res, 404, { error: 'not_found' });
      answer(res, 200, { value, ttl: pttl < 0 ? pttl : Math.round(pttl / 1000) });
    }, unavailable(res));
  })
  .listen(Number(process.env.PORT), '127.0.0.1');
