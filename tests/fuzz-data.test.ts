// The data fuzzer: names and values of any bytes round-trip under base64 (and text reads answer them right or 422),
// non-canonical base64 is refused, raw PUT bodies round-trip, /upstash commands answer, leave and announce exactly
// what the same commands sent to Redis directly do, and key walks of long keys finish with small cursors.
// Seeded and bounded like tests/fuzz.test.ts: FUZZ_SEED (default 28), FUZZ_RUNS (default 4, times 5 here).
import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import Redis from 'ioredis';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { databaseUrl, eventsAfter, feedApp, lastId } from './support/feed';
import {
  ALWAYS_WRITES,
  bytes,
  longKey,
  nonCanonical,
  UPSTASH_KEYS,
  upstashCommand,
} from './support/fuzz-data';

const SEED = Number(process.env.FUZZ_SEED ?? 28);
const RUNS = Number(process.env.FUZZ_RUNS ?? 4) * 5;
const params = (offset: number) => ({ seed: SEED + offset, numRuns: RUNS, endOnFailure: true });
/** Each property's time limit: runs take ~10-100 ms each on a loaded machine. */
const TIMEOUT = Math.max(30_000, RUNS * 200);

let t: TestApp;
/** A connection that reads integer replies as exact strings and everything else as Buffers (callBuffer). */
let exact: Redis;
beforeAll(async () => {
  t = await feedApp('fuzz-data', 9);
  exact = new Redis(databaseUrl(9), { stringNumbers: true });
});
afterAll(async () => {
  exact.disconnect();
  await t.close();
});

const api = () => request(t.data);
const b64 = (b: Buffer) => b.toString('base64');
const raw = (key: string) => `${t.prefix}${key}`;

describe('names and values of any bytes', () => {
  test(
    'when a hash holds them under base64, then every field reads back, in base64 and as text',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.uniqueArray(bytes(1), { minLength: 1, maxLength: 4, selector: b64 }),
          bytes(),
          async (names, value) => {
            await t.raw.del(raw('fd-h'));
            const fields = Object.fromEntries(names.map((n) => [b64(n), b64(value)]));
            await api().post('/store/hash/fd-h').send({ fields, encoding: 'base64' }).expect(201);
            for (const name of names) {
              const coded = await api().get(
                `/store/hash/fd-h/field/${encodeURIComponent(b64(name))}?encoding=base64`,
              );
              expect([coded.status, coded.body.field, coded.body.value]).toEqual([
                200,
                b64(name),
                b64(value),
              ]);
              // As text: a name that is UTF-8 is named in the path; its answer is the text, or 422 when it is not text.
              const text = name.toString('utf8');
              // Only a name that is text, and not a dot segment a URL normalises away.
              if (!isUtf8(name) || text === '.' || text === '..') continue;
              const res = await api().get(`/store/hash/fd-h/field/${encodeURIComponent(text)}`);
              if (isUtf8(value))
                expect([res.status, res.body.field, res.body.value]).toEqual([
                  200,
                  text,
                  value.toString('utf8'),
                ]);
              else expect([res.status, res.body.error]).toEqual([422, 'binary_value']);
            }
          },
        ),
        params(1),
      );
    },
    TIMEOUT,
  );

  test(
    'when set and sorted set members are any bytes, then they read back under base64',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.uniqueArray(bytes(1), { minLength: 1, maxLength: 4, selector: b64 }),
          async (members) => {
            await t.raw.del(raw('fd-s'), raw('fd-z'));
            const coded = members.map(b64);
            await api().post('/store/set/fd-s').send({ members: coded, encoding: 'base64' }).expect(201);
            const set = await api().get('/store/set/fd-s?encoding=base64').expect(200);
            expect([...set.body.members].sort()).toEqual([...coded].sort());
            const scores = Object.fromEntries(coded.map((m, i) => [m, i]));
            await api().post('/store/zset/fd-z').send({ members: scores, encoding: 'base64' }).expect(201);
            for (const [i, m] of coded.entries()) {
              const res = await api().get(`/store/zset/fd-z/member/${encodeURIComponent(m)}?encoding=base64`);
              expect([res.status, res.body.member, res.body.score]).toEqual([200, m, i]);
            }
          },
        ),
        params(2),
      );
    },
    TIMEOUT,
  );

  test(
    'when a value or a name is not canonical base64, then 400 and nothing is written',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          bytes(1).chain((b) => nonCanonical(b)),
          async (text) => {
            await t.raw.del(raw('fd-nc'));
            const value = await api().post('/store/string/fd-nc').send({ value: text, encoding: 'base64' });
            const field = await api()
              .post('/store/hash/fd-nc')
              .send({ fields: { [text]: 'dg==' }, encoding: 'base64' });
            const member = await api().post(
              `/store/set/fd-nc/member/${encodeURIComponent(text)}?encoding=base64`,
            );
            expect([value.status, field.status, member.status]).toEqual([400, 400, 400]);
            expect(await t.raw.exists(raw('fd-nc'))).toBe(0);
          },
        ),
        params(3),
      );
    },
    TIMEOUT,
  );

  test(
    'when a raw PUT body is any bytes, then GET answers the same bytes and their base64',
    async () => {
      await fc.assert(
        fc.asyncProperty(bytes(), async (body) => {
          await api()
            .put('/store/string/fd-raw')
            .set('Content-Type', 'application/octet-stream')
            .send(body)
            .expect((r) => {
              expect(r.status).toBeLessThan(300);
            });
          const back = await api()
            .get('/store/string/fd-raw')
            .set('Accept', 'application/octet-stream')
            .buffer(true)
            .parse((res, done) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () => done(null, Buffer.concat(chunks)));
            });
          expect((back.body as Buffer).equals(body)).toBe(true);
          const coded = await api().get('/store/string/fd-raw?encoding=base64').expect(200);
          expect(coded.body.value).toBe(b64(body));
        }),
        params(4),
      );
    },
    TIMEOUT,
  );
});

/** A direct reply (integers as strings, the rest as Buffers) as the JSON text /upstash should answer. */
function expectedJson(reply: unknown): string {
  if (reply === null) return 'null';
  if (typeof reply === 'string') return reply;
  if (Buffer.isBuffer(reply)) return JSON.stringify(reply.toString('utf8'));
  if (Array.isArray(reply)) return `[${reply.map(expectedJson).join(',')}]`;
  return JSON.stringify(reply);
}

/** Each key's DUMP (null when missing), to tell which keys a command changed. */
const dumps = (keys: string[]) =>
  Promise.all(keys.map((k) => exact.dumpBuffer(k).then((d) => d?.toString('hex') ?? null)));

describe('/upstash against Redis directly', () => {
  test(
    'when a sequence of commands runs both ways, then results, final keys and change events agree',
    async () => {
      const direct = (k: string) => `${t.prefix}direct:${k}`;
      await fc.assert(
        fc.asyncProperty(fc.array(upstashCommand, { minLength: 1, maxLength: 8 }), async (commands) => {
          await t.raw.del(...UPSTASH_KEYS.flatMap((k) => [raw(k), direct(k)]));
          for (const command of commands) {
            const [name = '', ...args] = command;
            const lower = name.toLowerCase();
            const keys =
              ['hincrby', 'hset', 'hdel'].includes(lower) || !['del', 'unlink'].includes(lower)
                ? [args[0] as string]
                : args;
            const before = await dumps(keys.map(direct));
            const ownArgs = args.map((a) => (keys.includes(a) ? direct(a) : a));
            const reply = await exact
              .callBuffer(name, ...ownArgs)
              .then((r) => `{"result":${expectedJson(r)}}`)
              .catch((err: Error) => JSON.stringify({ error: err.message }));
            const after = await dumps(keys.map(direct));
            const from = await lastId(t);
            // A SET of a value goes in the path form with the value as the body (as Upstash's curl examples do).
            const pathForm = name === 'SET' && args[1] !== '';
            const res = pathForm
              ? await api()
                  .post(`/upstash/set/${encodeURIComponent(args[0] as string)}`)
                  .set('Content-Type', 'application/octet-stream')
                  .send(Buffer.from(args[1] as string))
              : await api().post('/upstash').send(command);
            const where = `${JSON.stringify(commands)} at ${JSON.stringify(command)}`;
            expect(`${where} ${res.text}`).toBe(`${where} ${reply}`);
            const events = (await eventsAfter(t, from)).map((e) => e.key).sort();
            const changed = keys.filter((_, i) => before[i] !== after[i]).sort();
            const allowed = ALWAYS_WRITES.has(lower) && !reply.startsWith('{"error"') ? keys : changed;
            expect(`${where} ${JSON.stringify(changed.filter((k) => !events.includes(k)))}`).toBe(
              `${where} []`,
            );
            expect(`${where} ${JSON.stringify(events.filter((k) => !allowed.includes(k)))}`).toBe(
              `${where} []`,
            );
          }
          const mine = await dumps(UPSTASH_KEYS.map(raw));
          const theirs = await dumps(UPSTASH_KEYS.map(direct));
          expect(mine).toEqual(theirs);
        }),
        params(5),
      );
    },
    TIMEOUT,
  );
});

describe('key walks', () => {
  test(
    'when keys of any length are walked with any limit, then the walk ends with every key and small cursors',
    async () => {
      const walker = await testApp('fuzz-walk');
      try {
        await fc.assert(
          fc.asyncProperty(
            fc.uniqueArray(longKey, { minLength: 1, maxLength: 40 }),
            fc.integer({ min: 1, max: 7 }),
            async (keys, limit) => {
              const run = `w${Math.random().toString(36).slice(2, 8)}:`;
              await walker.raw.mset(
                ...keys.flatMap((k) => [
                  `${walker.prefix}${run}${k}`.slice(0, walker.prefix.length + 1024),
                  'v',
                ]),
              );
              const names = new Set(keys.map((k) => `${run}${k}`.slice(0, 1024)));
              const seen = new Set<string>();
              let cursor = '';
              for (let page = 0; page < 2000; page++) {
                const res = await request(walker.data)
                  .get('/store/keys')
                  .query({ prefix: run, limit, ...(cursor ? { cursor } : {}) });
                expect([res.status, res.body.error]).toEqual([200, undefined]);
                expect(res.body.keys.length).toBeLessThanOrEqual(limit);
                for (const k of res.body.keys) seen.add(k.key);
                if (res.body.complete) break;
                cursor = res.body.cursor;
                expect(cursor.length).toBeLessThanOrEqual(256);
              }
              expect([...names].filter((n) => !seen.has(n))).toEqual([]);
              await walker.raw.del(...[...names].map((n) => `${walker.prefix}${n}`));
            },
          ),
          params(6),
        );
      } finally {
        await walker.close();
      }
    },
    // Each run writes and walks its own keys: ~0.2-0.4 s on a loaded machine (1,500 runs took over 300 s).
    Math.max(TIMEOUT, RUNS * 500),
  );
});
