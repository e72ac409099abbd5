// Every operation's answers, success and error alike, match what openapi.yaml documents for that status.
import { FAMILIES } from '../src/families';
import { type TestApp, testApp } from './support/app';
import { sampleRequest } from './support/auth';
import { responseProblems } from './support/schemas';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('responses');
});
afterAll(() => t.close());

const operations = () => t.context.served.filter((op) => !op.path.startsWith('/store/admin/flush'));

async function seed(): Promise<void> {
  for (const op of operations()) {
    const key = `${t.prefix}k-${op.id}`;
    const family = FAMILIES.find((f) => op.path.startsWith(`/store/${f.name}/`));
    if (family) await t.raw.call(family.sample[0], key, ...family.sample.slice(1));
  }
}

async function problems(): Promise<string[]> {
  const found: string[] = [];
  for (const op of operations()) {
    const res = await sampleRequest(t, op);
    const body = res.headers['content-type']?.startsWith('application/json') ? res.body : res.text;
    const problem = responseProblems(op.method, op.path, res.status, body);
    if (problem) found.push(problem);
  }
  return found;
}

test('when the keys do not exist, then every answer is documented and matches its schema', async () => {
  expect(await problems()).toEqual([]);
});

test('when the keys exist, then every answer is documented and matches its schema', async () => {
  await seed();
  expect(await problems()).toEqual([]);
});

test('when the keys hold another type, then every answer is documented and matches its schema', async () => {
  for (const op of operations()) {
    const key = `${t.prefix}k-${op.id}`;
    await t.raw.del(key);
    await t.raw.xadd(key, '*', 'f', 'a stream');
  }
  expect(await problems()).toEqual([]);
});
