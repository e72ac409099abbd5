// Every family read, on keys holding bytes that are not UTF-8: never a mangled string (422, or no value answered).
import request from 'supertest';
import { FAMILIES } from '../src/families';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('binary-sweep');
});
afterAll(() => t.close());

const BAD = Buffer.from([0x66, 0xff, 0xfe]);
const raw = (key: string) => `${t.prefix}${key}`;

/** A key of the family whose every element is BAD (a hash's field 'f' too, under the name 'f'). */
async function seed(family: string, key: string): Promise<void> {
  await t.raw.del(raw(key));
  if (family === 'string') await t.raw.set(raw(key), BAD);
  if (family === 'hash') await t.raw.hset(raw(key), 'f', BAD, BAD, BAD);
  if (family === 'set') await t.raw.sadd(raw(key), BAD);
  if (family === 'list') await t.raw.rpush(raw(key), BAD);
  if (family === 'zset') await t.raw.zadd(raw(key), 1, BAD);
}

test('when a key holds bytes that are not UTF-8, then no read answers U+FFFD: 422 binary_value or no value', async () => {
  const reads = t.context.served.filter(
    (op) => op.method === 'get' && FAMILIES.some((f) => op.path.startsWith(`/store/${f.name}/{key}`)),
  );
  expect(reads.length).toBeGreaterThan(15);
  const problems: string[] = [];
  for (const op of reads) {
    const family = FAMILIES.find((f) => op.path.startsWith(`/store/${f.name}/`))?.name as string;
    const key = `sweep-${family}`;
    await seed(family, key);
    const url = op.path
      .replace('{key}', key)
      .replace('{field}', 'f')
      .replace('{member}', 'm')
      .replace('{index}', '0');
    const res = await request(t.data).get(url);
    const text = JSON.stringify(res.body);
    if (text.includes('\uFFFD') || text.includes('\\ufffd'))
      problems.push(`${op.id}: mangled ${text.slice(0, 80)}`);
    if (res.status >= 500) problems.push(`${op.id}: ${res.status}`);
    if (res.status === 422 && res.body.error !== 'binary_value') problems.push(`${op.id}: ${res.body.error}`);
    // With base64, the same read never fails for the bytes' sake.
    const b64 = await request(t.data).get(`${url}?encoding=base64`);
    if (b64.status === 422) problems.push(`${op.id}?encoding=base64: 422 ${b64.body.error}`);
  }
  expect(problems).toEqual([]);
});
