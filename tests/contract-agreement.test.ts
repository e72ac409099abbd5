// Cases where the service and openapi.yaml disagreed (issue 28): each answers what the contract says.
import request from 'supertest';
import { type TestApp, testApp } from './support/app';
import { responseProblems } from './support/schemas';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('agreement');
});
afterAll(() => t.close());

const api = () => request(t.data);
const raw = (key: string) => `${t.prefix}${key}`;

describe('a list index with leading zeros (the contract allows ^-?[0-9]{1,18}$)', () => {
  test('when GET and POST name index 007, then they read and write index 7 (not 500)', async () => {
    await t.raw.rpush(raw('zeros'), ...'abcdefgh'.split(''));
    const get = await api().get('/store/list/zeros/index/007');
    expect([get.status, get.body]).toEqual([200, { index: 7, value: 'h' }]);
    const set = await api().post('/store/list/zeros/index/007').send({ value: 'H' });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ success: true, index: 7, value: 'H' });
    expect(await t.raw.lindex(raw('zeros'), 7)).toBe('H');
    expect((await api().get('/store/list/zeros/index/-01')).body).toEqual({ index: -1, value: 'H' });
    expect((await api().get('/store/list/zeros/index/0099')).status).toBe(404);
  });
});

describe('integer query parameters', () => {
  test('when start is ±(2^53 - 1), the contract bounds, then the page is answered; one past them is 400 naming the bound', async () => {
    await t.raw.rpush(raw('bounds'), 'a', 'b');
    const low = await api().get('/store/list/bounds').query({ start: '-9007199254740991' });
    expect(low.status).toBe(200);
    expect(responseProblems('get', '/store/list/{key}', 200, low.body)).toBe('');
    const high = await api().get('/store/list/bounds').query({ start: '9007199254740991' });
    expect([high.status, high.body.values]).toEqual([200, []]);
    const over = await api().get('/store/list/bounds').query({ start: '9007199254740993' });
    expect([over.status, over.body.error]).toEqual([400, 'invalid_request']);
    expect(over.body.message).toMatch(/start must be <= 9007199254740991/);
  });
});

describe('a key listing cursor', () => {
  test('when it carries a character after its end (WzAsIjE3OTIiXQ=X), then 400 like any cursor the service did not give', async () => {
    for (const cursor of [
      'WzAsIjE3OTIiXQ=X',
      'WzAsIjE3OTIiXQ=',
      'WzAsIjE3OTIiXQ==',
      'WzAsIjE3OTIiXQ!',
      'WzAsICIxNzkyIl0',
    ]) {
      const res = await api().get('/store/keys').query({ cursor });
      expect([cursor, res.status, res.body.error]).toEqual([cursor, 400, 'invalid_request']);
    }
    expect((await api().get('/store/keys').query({ cursor: 'WzAsIjE3OTIiXQ' })).status).toBe(200);
  });
});

describe('the index /', () => {
  test('when OPTIONS, PUT, POST or DELETE asks for it, then 405 method_not_allowed with Allow: GET, HEAD, as on every path', async () => {
    for (const method of ['options', 'put', 'post', 'delete'] as const) {
      for (const path of ['/', '/openapi.yaml']) {
        const res = await api()[method](path);
        expect([method, path, res.status, res.body.error, res.headers.allow]).toEqual([
          method,
          path,
          405,
          'method_not_allowed',
          'GET, HEAD',
        ]);
      }
    }
    expect((await api().get('/')).status).toBe(200);
    expect((await api().head('/')).status).toBe(200);
  });
});

describe('answers the contract now documents', () => {
  test('when a string batch with "atomic": "all" holds an if_match that fails, then its 412 is documented', async () => {
    const res = await api()
      .post('/store/string/batch')
      .send({ atomic: 'all', operations: [{ type: 'set', key: 'b412', value: 'v', if_match: '"nope"' }] });
    expect(res.status).toBe(412);
    expect(responseProblems('post', '/store/string/batch', 412, res.body)).toBe('');
  });

  test('when admin flush or reload carries If-Match, then its 400 is documented and nothing is flushed', async () => {
    await t.raw.set(raw('kept'), 'v');
    for (const path of ['/store/admin/flush', '/store/admin/reload']) {
      const res = await api().post(path).set('If-Match', '*');
      expect([path, res.status]).toEqual([path, 400]);
      expect(responseProblems('post', path, 400, res.body)).toBe('');
    }
    expect(await t.raw.get(raw('kept'))).toBe('v');
  });

  test('when HEAD of a list carries If-None-Match with two entity-tags, then it answers as GET does', async () => {
    await t.raw.rpush(raw('two-tags'), 'a');
    const etag = (await api().get('/store/list/two-tags')).headers.etag as string;
    for (const header of [`"x", ${etag}`, `W/"x",${etag}`, '"x", "y"']) {
      const [get, head] = await Promise.all([
        api().get('/store/list/two-tags').set('If-None-Match', header),
        api().head('/store/list/two-tags').set('If-None-Match', header),
      ]);
      expect([header, head.status]).toEqual([header, get.status]);
    }
  });
});
