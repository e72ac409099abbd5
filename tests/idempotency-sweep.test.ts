// Every write route of every family, sent twice with one Idempotency-Key: the second is the first's answer, replayed.
import { randomUUID } from 'node:crypto';
import { FAMILIES } from '../src/families';
import { type TestApp, testApp } from './support/app';
import { sampleRequest } from './support/auth';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('idem-sweep');
});
afterAll(async () => {
  const records = await t.raw.keys('#svc:idem:*');
  if (records.length > 0) await t.raw.del(...records);
  await t.close();
});

const raw = (key: string) => `${t.prefix}${key}`;

test('when any write is retried with its Idempotency-Key, then the retry answers the same, replayed, and changes nothing', async () => {
  const writes = t.context.served.filter(
    (op) => op.permission === 'write' && FAMILIES.some((f) => op.path.startsWith(`/store/${f.name}/{key}`)),
  );
  expect(writes.length).toBeGreaterThan(20);
  const problems: string[] = [];
  for (const op of writes) {
    const family = FAMILIES.find((f) => op.path.startsWith(`/store/${f.name}/`)) as (typeof FAMILIES)[number];
    const key = `k-${op.id}`;
    await t.raw.del(raw(key));
    await t.raw.call(family.sample[0], raw(key), ...family.sample.slice(1));
    const idem = randomUUID();
    const first = await sampleRequest(t, op).set('Idempotency-Key', idem);
    const after = await t.raw.dumpBuffer(raw(key));
    const retry = await sampleRequest(t, op).set('Idempotency-Key', idem);
    const same =
      retry.status === first.status &&
      JSON.stringify({ ...retry.body, timestamp: 0, request_id: 0 }) ===
        JSON.stringify({ ...first.body, timestamp: 0, request_id: 0 }) &&
      retry.headers.etag === first.headers.etag;
    if (!same) problems.push(`${op.id}: ${first.status} then ${retry.status} ${JSON.stringify(retry.body)}`);
    if (retry.headers['idempotent-replayed'] !== 'true') problems.push(`${op.id}: not replayed`);
    const now = await t.raw.dumpBuffer(raw(key));
    if (!(now === null ? after === null : after?.equals(now)))
      problems.push(`${op.id}: the retry changed the key`);
  }
  expect(problems).toEqual([]);
});
