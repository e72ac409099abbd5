// The benchmark's scenarios: which request each sends, what it seeds in Redis, how many operations a request is.
import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import type { RequestSpec } from './load';

/** A 64-byte value: typical of a cache entry or a session token, small enough that HTTP costs dominate. */
export const VALUE = 'v'.repeat(64);
export const STRING_KEY = 'bench:string';
const HASH_KEY = 'bench:hash';
const SET_KEY = 'bench:set';
const LARGE_KEY = 'bench:large';
const RAW_KEY = 'bench:raw';
/** 64 KiB of random bytes: a compressed document or an image thumbnail, stored and read as is (no JSON, no base64). */
const RAW_VALUE = randomBytes(64 * 1024);
const octets = { 'content-type': 'application/octet-stream' };
const LEADERBOARD_KEY = 'bench:leaderboard';
/** Players on the board: big enough that the top 10 is a real range read, small enough to seed at once. */
const PLAYERS = 1_000;
/** Members cycle through this many names, so the set stays bounded and most adds find the member present. */
const MEMBERS = 10_000;
const BATCH_SIZE = 100;

export interface Scenario {
  id:
    | 'get'
    | 'post'
    | 'hash'
    | 'large'
    | 'member'
    | 'incr'
    | 'leaderboard'
    | 'batch'
    | 'raw-get'
    | 'raw-put'
    | 'upstash'
    | 'upstash-get'
    | 'upstash-hash';
  title: string;
  /** Redis operations one request carries (a batch of 100 sets is 100). */
  opsPerRequest: number;
  request: RequestSpec;
  /** Seeds Redis directly (keys as the service names them: the benchmark sets no SVC_KEY_PREFIX). */
  seed?: (redis: Redis) => Promise<void>;
}

const json = { 'content-type': 'application/json' };

async function seedHash(redis: Redis): Promise<void> {
  const fields = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`field${i}`, VALUE.slice(0, 16)]));
  await redis.hset(HASH_KEY, fields);
}

export const GET_STRING: Scenario = {
  id: 'get',
  title: 'GET string',
  opsPerRequest: 1,
  request: { method: 'GET', path: `/store/string/${STRING_KEY}` },
  seed: async (redis) => {
    await redis.set(STRING_KEY, VALUE);
  },
};

function memberPath(): RequestSpec['setupRequest'] {
  let n = 0;
  return (req) => ({ ...req, path: `/store/set/${SET_KEY}/member/m${n++ % MEMBERS}` });
}

/** What @upstash/redis sends for a pipeline of 100 SETs (POST /upstash/pipeline, base64 answers). */
const upstashPipeline = JSON.stringify(
  Array.from({ length: BATCH_SIZE }, (_, i) => ['set', `bench:upstash:${i}`, VALUE]),
);

const batchBody = JSON.stringify({
  operations: Array.from({ length: BATCH_SIZE }, (_, i) => ({
    type: 'set',
    key: `bench:batch:${i}`,
    value: VALUE,
  })),
});

/** 100 string sets in one batch request (the service's and, as its floor, baseline (b)'s: baseline-node.ts). */
export const BATCH: Scenario = {
  id: 'batch',
  title: `string batch (${BATCH_SIZE} sets)`,
  opsPerRequest: BATCH_SIZE,
  request: { method: 'POST', path: '/store/string/batch', headers: json, body: batchBody },
};

/** The service's scenarios, in the order they run. */
export const SERVICE_SCENARIOS: readonly Scenario[] = [
  GET_STRING,
  {
    id: 'post',
    title: 'POST string',
    opsPerRequest: 1,
    request: {
      method: 'POST',
      path: '/store/string/bench:post',
      headers: json,
      body: JSON.stringify({ value: VALUE }),
    },
  },
  {
    id: 'hash',
    title: 'GET hash (10 fields)',
    opsPerRequest: 1,
    request: { method: 'GET', path: `/store/hash/${HASH_KEY}` },
    seed: seedHash,
  },
  {
    id: 'member',
    title: 'POST set member',
    opsPerRequest: 1,
    request: {
      method: 'POST',
      path: `/store/set/${SET_KEY}/member/m0`,
      headers: json,
      setupRequest: memberPath(),
    },
  },
  {
    // Every request increments the same key: the hot counter (page views, a rate window) is the case to measure.
    id: 'incr',
    title: 'POST string incr',
    opsPerRequest: 1,
    request: { method: 'POST', path: '/store/string/bench:counter/incr', headers: json, body: '{"by":1}' },
  },
  {
    // The read a leaderboard page makes on every view: the top 10 with scores (ZRANGE ... REV WITHSCORES).
    id: 'leaderboard',
    title: `GET zset top 10 (of ${PLAYERS.toLocaleString('en')})`,
    opsPerRequest: 1,
    request: { method: 'GET', path: `/store/zset/${LEADERBOARD_KEY}?rev=true&limit=10` },
    seed: async (redis) => {
      await redis.del(LEADERBOARD_KEY);
      await redis.zadd(
        LEADERBOARD_KEY,
        ...Array.from({ length: PLAYERS }, (_, i) => [i * 7, `player${i}`]).flat(),
      );
    },
  },
  BATCH,
  {
    id: 'raw-get',
    title: 'GET string bytes (64 KiB, octet-stream)',
    opsPerRequest: 1,
    request: {
      method: 'GET',
      path: `/store/string/${RAW_KEY}`,
      headers: { accept: 'application/octet-stream' },
    },
    seed: async (redis) => {
      await redis.set(RAW_KEY, RAW_VALUE);
    },
  },
  {
    id: 'raw-put',
    title: 'PUT string bytes (64 KiB, octet-stream)',
    opsPerRequest: 1,
    request: { method: 'PUT', path: '/store/string/bench:raw-put', headers: octets, body: RAW_VALUE },
  },
  {
    // The same 100 writes as the batch, through the Upstash-compatible endpoint: not atomic, one command each.
    id: 'upstash',
    title: `Upstash pipeline (${BATCH_SIZE} SETs)`,
    opsPerRequest: BATCH_SIZE,
    request: {
      method: 'POST',
      path: '/upstash/pipeline',
      headers: { ...json, 'upstash-encoding': 'base64' },
      body: upstashPipeline,
    },
  },
  {
    // A small read through /upstash: one GETRANGE capped at the reply budget (src/upstash/run.ts plainGet).
    id: 'upstash-get',
    title: 'Upstash GET string',
    opsPerRequest: 1,
    request: {
      method: 'POST',
      path: '/upstash',
      headers: { ...json, 'upstash-encoding': 'base64' },
      body: JSON.stringify(['GET', STRING_KEY]),
    },
    seed: GET_STRING.seed,
  },
  {
    id: 'upstash-hash',
    title: 'Upstash HGETALL (10 fields)',
    opsPerRequest: 1,
    request: {
      method: 'POST',
      path: '/upstash',
      headers: { ...json, 'upstash-encoding': 'base64' },
      body: JSON.stringify(['HGETALL', HASH_KEY]),
    },
    seed: seedHash,
  },
  {
    // Last: its 1 MiB buffers raise the service's RSS, which the scenarios after it would report as theirs.
    // The largest value the service takes: what a whole-value cost (a digest for the ETag, JSON) amounts to.
    id: 'large',
    title: 'GET string (1 MiB)',
    opsPerRequest: 1,
    request: { method: 'GET', path: `/store/string/${LARGE_KEY}` },
    seed: async (redis) => {
      await redis.set(LARGE_KEY, 'v'.repeat(1024 * 1024));
    },
  },
];

/**
 * Sends one request of the scenario: 'ok' on 2xx, 'missing' when the route is not served (404
 * unknown_endpoint: the family is not built on this branch), else an error naming the answer.
 */
export async function probe(baseUrl: string, scenario: Scenario, auth: Record<string, string>) {
  const { method, path, body, headers } = scenario.request;
  const res = await fetch(baseUrl + path, {
    method,
    headers: { ...headers, ...auth },
    body: body as string | Buffer | undefined,
  });
  const text = await res.text();
  if (res.ok) return 'ok';
  if (res.status === 404 && text.includes('"unknown_endpoint"')) return 'missing';
  // A method the branch does not serve on that path (PUT of raw bytes before issue 25).
  if (res.status === 405) return 'missing';
  throw new Error(`${scenario.title}: ${method} ${path} answered ${res.status} ${text.slice(0, 300)}`);
}
