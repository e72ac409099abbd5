// What an ETag digest costs inside Redis per type and size, against the read itself and the old DUMP digest:
//   node -r ./tests/support/ts-register.js bench/etag-digest.ts [redis-url]   (keys under bench:etag:, removed after)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';

const lua = readFileSync(join(__dirname, '..', 'src', 'redis', 'scripts', 'typed.lua'), 'utf8');
// typed.lua's digest functions as they are, then a loop that times them (µs per call, the mean of `n` calls).
const digest = lua.slice(
  lua.indexOf('local function sorted_digests'),
  lua.indexOf('-- Whether `key`, holding type'),
);
const script = `${digest}
local kind, n = redis.call('TYPE', KEYS[1])['ok'], tonumber(ARGV[1])
local function timed(f)
  local t = redis.call('TIME'); for i = 1, n do f() end; local u = redis.call('TIME')
  return math.floor(((u[1] - t[1]) * 1000000 + (u[2] - t[2])) / n)
end
local read = {list = {'LRANGE', KEYS[1], 0, -1}, zset = {'ZRANGE', KEYS[1], 0, -1, 'WITHSCORES'},
  hash = {'HGETALL', KEYS[1]}, set = {'SMEMBERS', KEYS[1]}}
return {timed(function() redis.call(unpack(read[kind])) end),
  timed(function() redis.sha1hex(redis.call('DUMP', KEYS[1])) end), timed(function() etag_of(KEYS[1], kind) end)}`;

const SIZES = [10, 300, 10_000];
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

async function main(): Promise<void> {
  const redis = new Redis(process.argv[2] ?? 'redis://127.0.0.1:6379');
  const rows: string[] = ['| key | read | sha1(DUMP) | content digest |', '| --- | ---: | ---: | ---: |'];
  try {
    for (const n of SIZES) {
      const key = (t: string) => `bench:etag:${t}${n}`;
      await redis.hset(key('hash'), ...range(n).flatMap((i) => [`field${i}`, `value-${i}-xxxxxxxxxx`]));
      await redis.sadd(key('set'), ...range(n).map((i) => `member${i}`));
      await redis.zadd(key('zset'), ...range(n).flatMap((i) => [i, `member${i}`]));
      await redis.rpush(key('list'), ...range(n).map((i) => `element${i}`));
      for (const type of ['hash', 'set', 'zset', 'list']) {
        const calls = n >= 10_000 ? 20 : 500;
        const [read, dump, content] = (await redis.eval(script, 1, key(type), calls)) as number[];
        rows.push(`| ${type} of ${n} | ${read} µs | ${dump} µs | ${content} µs |`);
      }
      await redis.del(...['hash', 'set', 'zset', 'list'].map(key));
    }
  } finally {
    redis.disconnect();
  }
  console.log(rows.join('\n'));
}

void main();
