// Names in the path (hash fields, sorted set members) read back right when the stored answer holds U+FFFD: the read
// again as bytes sends and echoes the path's name as its UTF-8 bytes, never as latin1.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('binary-names');
});
afterAll(() => t.close());

const api = () => request(t.data);
const NAMES = ['𝔘', 'é', 'plain', '\uFFFD'];

test('when hash fields named beyond ASCII hold U+FFFD, then each field read answers its name and value', async () => {
  const fields = Object.fromEntries(NAMES.map((n) => [n, '\uFFFD']));
  await api().post('/store/hash/hc').send({ fields }).expect(201);
  for (const name of NAMES) {
    const res = await api().get(`/store/hash/hc/field/${encodeURIComponent(name)}`);
    expect([res.status, res.body]).toEqual([200, { field: name, value: '\uFFFD', ttl: -1 }]);
  }
  const batch = await api()
    .post('/store/hash/batch')
    .send({ operations: NAMES.map((field) => ({ type: 'getField', key: 'hc', field })) });
  expect(batch.body.results.map((r: { field: string; value: string }) => [r.field, r.value])).toEqual(
    NAMES.map((n) => [n, '\uFFFD']),
  );
});

test('when sorted set members named beyond ASCII sit next to U+FFFD, then the member read answers its name', async () => {
  await api()
    .post('/store/zset/zc')
    .send({ members: Object.fromEntries(NAMES.map((n, i) => [n, i])) })
    .expect(201);
  for (const [i, name] of NAMES.entries()) {
    const res = await api().get(`/store/zset/zc/member/${encodeURIComponent(name)}`);
    expect([res.status, res.body.member, res.body.score]).toEqual([200, name, i]);
  }
});

test('when a field’s stored bytes are not UTF-8, then its read is still 422 binary_value', async () => {
  await t.raw.hset(`${t.prefix}hbad`, 'é', Buffer.from([0xff, 0xfe]));
  const res = await api().get(`/store/hash/hbad/field/${encodeURIComponent('é')}`);
  expect([res.status, res.body.error]).toEqual([422, 'binary_value']);
});
