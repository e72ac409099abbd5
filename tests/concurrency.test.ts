// Concurrent requests on one key: no interleaving loses a field, a member or a TTL, or answers a wrong status.
import { once } from 'node:events';
import type { Server } from 'node:http';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
let server: Server;
beforeAll(async () => {
  t = await testApp('concurrency');
  // One listening server, so that the requests really are in flight together.
  server = t.data.listen(0, '127.0.0.1');
  await once(server, 'listening');
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

const N = 50;
const api = () => request(server);
const raw = (key: string) => `${t.prefix}${key}`;
const parallel = (make: (i: number) => PromiseLike<request.Response>) =>
  Promise.all(Array.from({ length: N }, (_, i) => make(i)));
/** How many responses had each status, e.g. {201: 1, 200: 49}. */
function statuses(responses: request.Response[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of responses) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}
const sequence = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('hashes', () => {
  test('parallel merges of distinct fields into a new hash: one 201, every field kept, counts 1..N', async () => {
    const res = await parallel((i) =>
      api()
        .post('/store/hash/h-merge')
        .send({ fields: { [`f${i}`]: `${i}` } }),
    );
    expect(statuses(res)).toEqual({ 201: 1, 200: N - 1 });
    expect(res.map((r) => r.body.fields_count).sort((a, b) => a - b)).toEqual(sequence(N));
    expect(await t.raw.hlen(raw('h-merge'))).toBe(N);
  });

  test('parallel merges with and without ttl: the expiry set by one is never lost by another', async () => {
    const res = await parallel((i) =>
      api()
        .post('/store/hash/h-ttl')
        .send({ fields: { [`f${i}`]: 'v' }, ...(i % 2 ? {} : { ttl: 1000 }) }),
    );
    expect(statuses(res)).toEqual({ 201: 1, 200: N - 1 });
    expect(await t.raw.hlen(raw('h-ttl'))).toBe(N);
    expect(await t.raw.ttl(raw('h-ttl'))).toBeGreaterThan(900);
  });

  test('parallel replaces and merges: the hash is the last replace plus the merges after it', async () => {
    const res = await parallel((i) =>
      i % 2
        ? api()
            .post('/store/hash/h-replace')
            .send({ fields: { [`m${i}`]: 'merge' } })
        : api()
            .post('/store/hash/h-replace')
            .send({ fields: { [`r${i}`]: 'replace' }, mode: 'replace', ttl: 1000 }),
    );
    expect(statuses(res)).toEqual({ 201: 1, 200: N - 1 });
    const fields = Object.keys(await t.raw.hgetall(raw('h-replace')));
    expect(fields.filter((f) => f.startsWith('r'))).toHaveLength(1);
    const merges = res.filter((_, i) => i % 2).map((r) => r.body.fields_count);
    expect(res.filter((_, i) => i % 2 === 0).every((r) => r.body.fields_count === 1)).toBe(true);
    expect(fields.length === 1 || merges.includes(fields.length)).toBe(true);
    expect(await t.raw.ttl(raw('h-replace'))).toBeGreaterThan(900);
  });

  test('parallel conditional creates of one hash: exactly one 201, the others 409 key_exists', async () => {
    const res = await parallel((i) =>
      api()
        .post('/store/hash/h-cond')
        .set('If-None-Match', '*')
        .send({ fields: { owner: `${i}` } }),
    );
    expect(statuses(res)).toEqual({ 201: 1, 409: N - 1 });
    const winner = res.findIndex((r) => r.status === 201);
    expect(await t.raw.hgetall(raw('h-cond'))).toEqual({ owner: `${winner}` });
  });

  test('parallel conditional writes of one field: exactly one 201, the others 409 field_exists', async () => {
    const res = await parallel((i) =>
      api()
        .post('/store/hash/h-field/field/lock')
        .set('If-None-Match', '*')
        .send({ value: `${i}` }),
    );
    expect(statuses(res)).toEqual({ 201: 1, 409: N - 1 });
    expect(res.filter((r) => r.status === 409).every((r) => r.body.error === 'field_exists')).toBe(true);
    const winner = res.find((r) => r.status === 201);
    expect(await t.raw.hget(raw('h-field'), 'lock')).toBe(winner?.body.value);
  });

  test('parallel field writes and expire calls: every field and the expiry are kept', async () => {
    await t.raw.hset(raw('h-expire'), 'seed', 'x');
    const isExpire = (i: number) => i % 5 === 4;
    const res = await parallel((i) =>
      isExpire(i)
        ? api().post('/store/hash/h-expire/expire').send({ ttl: 1000 })
        : api().post(`/store/hash/h-expire/field/f${i}`).send({ value: 'v' }),
    );
    const expires = res.filter((_, i) => isExpire(i)).length;
    expect(statuses(res)).toEqual({ 200: expires, 201: N - expires });
    expect(await t.raw.hlen(raw('h-expire'))).toBe(1 + N - expires);
    expect(await t.raw.ttl(raw('h-expire'))).toBeGreaterThan(900);
  });
});

describe('sets', () => {
  test('parallel adds of distinct members to a new set: one 201, every member kept, counts 1..N', async () => {
    const res = await parallel((i) =>
      api()
        .post('/store/set/s-merge')
        .send({ members: [`m${i}`], ...(i % 2 ? {} : { ttl: 1000 }) }),
    );
    expect(statuses(res)).toEqual({ 201: 1, 200: N - 1 });
    expect(res.every((r) => r.body.added === 1)).toBe(true);
    expect(res.map((r) => r.body.members_count).sort((a, b) => a - b)).toEqual(sequence(N));
    expect(await t.raw.scard(raw('s-merge'))).toBe(N);
    expect(await t.raw.ttl(raw('s-merge'))).toBeGreaterThan(900);
  });

  test('parallel member adds of distinct members: each one 201 and kept', async () => {
    const res = await parallel((i) =>
      api().post(`/store/set/s-members/member/m${i}`).set('Content-Type', 'application/json'),
    );
    expect(statuses(res)).toEqual({ 201: N });
    expect(await t.raw.scard(raw('s-members'))).toBe(N);
  });

  test('parallel adds of one member: exactly one added, the others 200 added: false', async () => {
    const res = await parallel(() =>
      api().post('/store/set/s-same/member/only').set('Content-Type', 'application/json'),
    );
    expect(statuses(res)).toEqual({ 201: 1, 200: N - 1 });
    expect(res.filter((r) => r.body.added === true)).toHaveLength(1);
  });

  test('parallel conditional adds of one member: exactly one 201, the others 409 duplicate_member', async () => {
    const res = await parallel(() =>
      api()
        .post('/store/set/s-cond/member/only')
        .set('Content-Type', 'application/json')
        .set('If-None-Match', '*'),
    );
    expect(statuses(res)).toEqual({ 201: 1, 409: N - 1 });
    expect(res.filter((r) => r.status === 409).every((r) => r.body.error === 'duplicate_member')).toBe(true);
  });

  test('parallel replaces and merges: the set is the last replace plus the merges after it', async () => {
    const res = await parallel((i) =>
      api()
        .post('/store/set/s-replace')
        .send(i % 2 ? { members: [`m${i}`] } : { members: [`r${i}`], mode: 'replace', ttl: 1000 }),
    );
    expect(statuses(res)).toEqual({ 201: 1, 200: N - 1 });
    const members = await t.raw.smembers(raw('s-replace'));
    expect(members.filter((m) => m.startsWith('r'))).toHaveLength(1);
    expect(await t.raw.ttl(raw('s-replace'))).toBeGreaterThan(900);
  });

  test('parallel pops: each member is answered exactly once, and the rest are 404', async () => {
    await t.raw.sadd(raw('s-pop'), ...Array.from({ length: 30 }, (_, i) => `p${i}`));
    const res = await parallel(() =>
      api().post('/store/set/s-pop/pop').set('Content-Type', 'application/json'),
    );
    expect(statuses(res)).toEqual({ 200: 30, 404: N - 30 });
    const popped = res.filter((r) => r.status === 200).map((r) => r.body.member);
    expect(new Set(popped).size).toBe(30);
    expect(await t.raw.exists(raw('s-pop'))).toBe(0);
  });
});
