// Change events of writes through /upstash: one per key a write changed (counters whatever their result's sign),
// none for a key a DEL did not delete.
import request from 'supertest';
import type { TestApp } from './support/app';
import { eventsAfter, feedApp, lastId } from './support/feed';

let t: TestApp;
beforeAll(async () => {
  t = await feedApp('upstash-events', 5);
});
afterAll(() => t.close());

const run = (command: (string | number)[]) => request(t.data).post('/upstash').send(command);
/** The events (key, op) appended while `commands` ran, and their results. */
async function eventsOf(...commands: (string | number)[][]) {
  const from = await lastId(t);
  const results: unknown[] = [];
  for (const c of commands) results.push((await run(c)).body.result);
  return { results, events: (await eventsAfter(t, from)).map((e) => [e.key, e.op]) };
}

test.each([
  [['DECRBY', 'ev', 10], -5],
  [['DECR', 'ev'], 4],
  [['INCRBY', 'ev', -5], 0],
  [['INCRBY', 'ev', -6], -1],
])('when %j leaves the counter at %d, then one event names it', async (command, result) => {
  await run(['SET', 'ev', 5]);
  const { results, events } = await eventsOf(command);
  expect(results).toEqual([result]);
  expect(events).toEqual([['ev', (command[0] as string).toLowerCase()]]);
});

test('when HINCRBY leaves a field negative, then one event names the hash', async () => {
  const { results, events } = await eventsOf(['HINCRBY', 'evh', 'f', -3]);
  expect(results).toEqual([-3]);
  expect(events).toEqual([['evh', 'hincrby']]);
});

test('when DEL names a key that exists and one that does not, then only the deleted key has an event', async () => {
  await run(['SET', 'ev-del', 'v']);
  const { results, events } = await eventsOf(['DEL', 'ev-del', 'ev-none']);
  expect(results).toEqual([1]);
  expect(events).toEqual([['ev-del', 'del']]);
  const both = await eventsOf(['SET', 'a1', 'v'], ['SET', 'a2', 'v'], ['UNLINK', 'a1', 'a2', 'a3']);
  expect(both.results).toEqual(['OK', 'OK', 2]);
  expect(both.events).toEqual([
    ['a1', 'set'],
    ['a2', 'set'],
    ['a1', 'unlink'],
    ['a2', 'unlink'],
  ]);
});
