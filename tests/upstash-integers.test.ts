// /upstash answers integers beyond 2^53 with every digit (as Upstash does): counters near 2^63 come back exact.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('upstash-integers');
});
afterAll(() => t.close());

/** The raw JSON text of an answer (JSON.parse would round the number again): supertest's `text`. */
const text = async (path: string, body: unknown) =>
  (
    await request(t.data)
      .post(path)
      .send(body as object)
      .set('Accept', 'application/json')
  ).text;

test('when DECR, INCRBY and HINCRBY reach beyond 2^53, then the answer holds every digit of what Redis holds', async () => {
  await t.raw.set(`${t.prefix}bi`, '9223372036854775806');
  expect(await text('/upstash', ['DECR', 'bi'])).toBe('{"result":9223372036854775805}');
  expect(await text('/upstash', ['INCRBY', 'bi', '2'])).toBe('{"result":9223372036854775807}');
  expect(await text('/upstash', ['DECRBY', 'bi', '-1'])).toBe(
    '{"error":"ERR increment or decrement would overflow"}',
  );
  expect(await t.raw.get(`${t.prefix}bi`)).toBe('9223372036854775807');
  expect(await text('/upstash', ['HINCRBY', 'bh', 'f', '-9007199254740993'])).toBe(
    '{"result":-9007199254740993}',
  );
  expect(await text('/upstash', ['INCR', 'small'])).toBe('{"result":1}');
});

test('when a pipeline and a transaction count beyond 2^53, then their items hold every digit', async () => {
  await t.raw.set(`${t.prefix}bp`, '9007199254740993');
  expect(
    await text('/upstash/pipeline', [
      ['INCR', 'bp'],
      ['GET', 'bp'],
    ]),
  ).toBe('[{"result":9007199254740994},{"result":"9007199254740994"}]');
  expect(
    await text('/upstash/multi-exec', [
      ['DECR', 'bp'],
      ['INCRBY', 'bp', 'x'],
    ]),
  ).toBe('[{"result":9007199254740993},{"error":"ERR value is not an integer or out of range"}]');
});

test('when a counter meets a value that is not an integer, then the error is Redis’s own', async () => {
  await t.raw.set(`${t.prefix}bs`, 'abc');
  expect(await text('/upstash', ['INCR', 'bs'])).toBe(
    '{"error":"ERR value is not an integer or out of range"}',
  );
  await t.raw.sadd(`${t.prefix}bw`, 'm');
  expect(await text('/upstash', ['INCR', 'bw'])).toBe(
    '{"error":"WRONGTYPE Operation against a key holding the wrong kind of value"}',
  );
});
