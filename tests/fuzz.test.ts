// The fuzzer: for every operation of openapi.yaml, requests generated from its schemas (valid, and invalid by
// mutation), each checked: no 5xx, a documented status and body, a refused request changes nothing, ETags stay.
// Seeded and bounded: FUZZ_SEED (default 28) and FUZZ_RUNS per operation (default 4); `npm run fuzz` runs longer.
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { type Listener, listen } from '../src/http/server';
import { openapiDocument, type TestApp, testApp } from './support/app';
import { CURRENT_ETAG, type FuzzRequest, Generator, KEYS, type Operation } from './support/fuzz';
import { responseProblems } from './support/schemas';

const SEED = Number(process.env.FUZZ_SEED ?? 28);
const RUNS = Number(process.env.FUZZ_RUNS ?? 4);
const FAMILIES = new Set(['string', 'hash', 'set', 'zset', 'list']);

let t: TestApp;
let listener: Listener;
let base: string;
beforeAll(async () => {
  t = await testApp('fuzz', { SVC_CHANGES_ENABLED: 'true' });
  listener = await listen(t.data, t.context, 0, '127.0.0.1');
  base = `http://127.0.0.1:${(listener.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await listener.close(0);
  await t.close();
});

const raw = (key: string) => `${t.prefix}${key}`;

/** Puts back the seeded keys a run removed (a pop, a delete, a flush): reads and writes keep meeting data. */
async function seed(): Promise<void> {
  const [s, h, set, z, l] = ['fz-string', 'fz-hash', 'fz-set', 'fz-zset', 'fz-list'].map(raw) as string[];
  await t.raw
    .multi()
    .set(s as string, '10', 'NX')
    .hsetnx(h as string, 'f1', 'v1')
    .sadd(set as string, 'm1', 'm2')
    .zadd(z as string, 'NX', 1, 'm1', 2, 'm2')
    .rpush(l as string, 'a')
    .ltrim(l as string, 0, 9)
    .del(raw('fz-none'))
    // A TTL an earlier run gave (`ttl: 1`) would end a seeded key in the middle of a run.
    .persist(s as string)
    .persist(h as string)
    .persist(set as string)
    .persist(z as string)
    .persist(l as string)
    .exec();
}

/** Every key of this app with its type and content, read without DUMP (TTLs only as whether it may expire). */
async function snapshot(): Promise<Map<string, string>> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await t.raw.scan(cursor, 'MATCH', `${t.prefix}*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  const types = (await t.raw.pipeline(keys.map((k) => ['type', k])).exec()) ?? [];
  const READ: Record<string, (k: string) => string[]> = {
    string: (k) => ['get', k],
    hash: (k) => ['hgetall', k],
    set: (k) => ['smembers', k],
    zset: (k) => ['zrange', k, '0', '-1', 'WITHSCORES'],
    list: (k) => ['lrange', k, '0', '-1'],
    stream: (k) => ['xrevrange', k, '+', '-', 'COUNT', '1'],
  };
  const reads = keys.map((k, i) => (READ[types[i]?.[1] as string] ?? ((key: string) => ['type', key]))(k));
  const contents = (await t.raw.pipeline([...reads, ...keys.map((k) => ['pttl', k])]).exec()) ?? [];
  const out = new Map<string, string>();
  keys.forEach((k, i) => {
    const content = contents[i]?.[1];
    // Sets: sorted, SMEMBERS's order is the hash table's.
    const shown = types[i]?.[1] === 'set' ? [...(content as string[])].sort() : content;
    // Whether it may expire: a TTL, or gone already (-2) between the reads.
    const ttl = (contents[keys.length + i]?.[1] as number) !== -1;
    out.set(k.slice(t.prefix.length), JSON.stringify([types[i]?.[1], shown, ttl]));
  });
  return out;
}

/**
 * The keys whose content differs. A key with a TTL that is gone, or read as none or empty (gone between SCAN,
 * TYPE and the read), has expired (a `ttl: 1` of an earlier run).
 */
function differences(before: Map<string, string>, after: Map<string, string>): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys].filter((k) => {
    const [was, now] = [before.get(k), after.get(k)];
    if (was === now) return false;
    const [type, content] = now === undefined ? ['none'] : JSON.parse(now);
    const expired = type === 'none' || ['null', '[]', '{}'].includes(JSON.stringify(content));
    return !(expired && was !== undefined && JSON.parse(was)[2] === true);
  });
}

interface Answer {
  status: number;
  body: unknown;
  etag: string | null;
}

async function send(req: FuzzRequest, method = req.method.toUpperCase()): Promise<Answer> {
  const url = new URL(base + req.path);
  for (const [k, v] of Object.entries(req.query)) url.searchParams.set(k, v);
  const headers: Record<string, string> = { Accept: 'application/json', ...req.headers };
  let body: string | Uint8Array | undefined;
  if (req.body instanceof Uint8Array) {
    headers['Content-Type'] = 'application/octet-stream';
    body = req.body;
  } else if (req.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = req.raw ? String(req.body) : JSON.stringify(req.body);
  }
  const res = await fetch(url, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  let parsed: unknown = text;
  if (res.headers.get('content-type')?.includes('json') && text) parsed = JSON.parse(text);
  return { status: res.status, body: text === '' ? undefined : parsed, etag: res.headers.get('etag') };
}

/** The ETag of a seeded key, asked for (a big key answers it only then); null when it is not a family's key. */
async function etagOf(state: Map<string, string>, key: string): Promise<string | null> {
  const type = JSON.parse(state.get(key) ?? '[]')[0];
  if (!FAMILIES.has(type)) return null;
  const path = `/store/${type}/${encodeURIComponent(key)}`;
  return (await send({ method: 'head', template: '', path, query: {}, headers: { 'If-None-Match': '"-"' } }))
    .etag;
}

/** Runs one request and checks everything the contract promises about its answer. */
async function check(op: Operation, req: FuzzRequest): Promise<void> {
  await seed();
  const before = await snapshot();
  const key = /^\/store\/\w+\/([^/]+)/.exec(req.path)?.[1];
  const target = key && KEYS.includes(decodeURIComponent(key)) ? decodeURIComponent(key) : undefined;
  const etagBefore = target ? await etagOf(before, target) : null;
  if (req.headers['If-Match'] === CURRENT_ETAG) req.headers['If-Match'] = etagBefore ?? '*';
  const answer = await send(req);
  const where = `${req.method.toUpperCase()} ${req.path} -> ${answer.status} ${JSON.stringify(answer.body)?.slice(0, 300)}`;
  // 501 command_refused is no failure: the server lacks a command the request needs (a field ttl on Redis 7), and
  // the contract check below holds it to the route's documented answers.
  const refused = answer.status === 501 && (answer.body as { error?: unknown })?.error === 'command_refused';
  if (answer.status >= 500 && !refused) throw new Error(`server error: ${where}`);
  const problem = responseProblems(op.method, op.template, answer.status, answer.body);
  if (problem) throw new Error(`${problem}\n${where}`);
  // HEAD answers as GET does, without a body (the body was checked with the GET).
  if (req.method === 'get') {
    const head = await send(req, 'HEAD');
    if (head.status !== answer.status || head.body !== undefined)
      throw new Error(`HEAD answered ${head.status} ${String(head.body)}: ${where}`);
  }
  const after = await snapshot();
  const changed = differences(before, after);
  if (answer.status >= 400 && changed.length > 0)
    throw new Error(
      `a refused request changed Redis (${changed.map((k) => `${k}: ${before.get(k)} -> ${after.get(k)}`).join(', ')}): ${where}`,
    );
  if (target && changed.length === 0 && etagBefore !== null) {
    const etagAfter = await etagOf(after, target);
    if (etagAfter !== etagBefore)
      throw new Error(`ETag of unchanged ${target} went ${etagBefore} -> ${etagAfter}`);
  }
}

const generator = new Generator(openapiDocument());
const operations = generator.operations();

test('the fuzzer covers every operation of the contract', () => {
  expect(operations.length).toBeGreaterThanOrEqual(80);
});

describe.each(operations.map((op, i) => [`${op.method.toUpperCase()} ${op.template}`, op, i] as const))(
  '%s',
  (_name, op, i) => {
    test(
      `when ${RUNS} generated requests (valid and invalid) are sent, then each answer is as documented`,
      async () => {
        const seed = SEED + i;
        const requests = fc.oneof(generator.valid(op), generator.invalid(op));
        const params = { seed, numRuns: RUNS, endOnFailure: true };
        try {
          await fc.assert(
            fc.asyncProperty(requests, (req) => check(op, req)),
            params,
          );
        } catch (err) {
          // The seed of this operation, to run it again alone.
          (err as Error).message =
            `FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} (operation seed ${seed})\n${(err as Error).message}`;
          throw err;
        }
        // Waiting operations (a lock's or a semaphore's acquire with wait_ms) may wait for part of each run.
      },
      30_000 + RUNS * 1_000,
    );
  },
);
