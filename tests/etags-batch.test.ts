// ETags in batches: `if_match` on every write item, the `etag` of results, and "atomic": "all".
import request from 'supertest';
import { FAMILIES } from '../src/families';
import { openapiDocument, type TestApp, testApp } from './support/app';
import { expectSchema } from './support/schemas';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('etags-batch');
});
afterAll(() => t.close());

type Schema = Record<string, unknown>;
const api = () => request(t.data);
const raw = (key: string) => `${t.prefix}${key}`;
const schemas = () => (openapiDocument().components as { schemas: Record<string, Schema> }).schemas;
/** The schema a `#/components/schemas/...` reference points to (also inside one: `.../IncrRequest/properties/ttl`). */
const named = (ref: unknown) =>
  String(ref)
    .replace('#/components/schemas/', '')
    .split('/')
    .reduce<Schema>((at, part) => at[part] as Schema, schemas());
const capitalised = (name: string) => `${name[0]?.toUpperCase()}${name.slice(1)}`;
const batch = (family: string, operations: unknown[], atomic?: 'all') =>
  api()
    .post(`/store/${family}/batch`)
    .send({ operations, ...(atomic ? { atomic } : {}) });
const etagOf = async (family: string, key: string) =>
  (await api().get(`/store/${family}/${key}`)).headers.etag as string;

/** A valid value for a schema of the contract: its first example, else the smallest value of its type. */
function sample(schema: Schema | undefined): unknown {
  if (!schema) return 'v';
  if (schema.$ref) return sample(named(schema.$ref));
  const choices = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  if (choices) return sample(choices[0]);
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples)) return schema.examples[0];
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.type === 'integer' || schema.type === 'number') return Math.max(Number(schema.minimum ?? 1), 1);
  if (schema.type === 'array') return [sample(schema.items as Schema)];
  if (schema.type === 'object') return item(schema);
  return 'v';
}

/** An item (or object) with every required property of its schema. */
function item(schema: Schema, key?: string): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = (schema.required ?? []) as string[];
  const value = Object.fromEntries(required.map((name) => [name, sample(properties[name] as Schema)]));
  return key === undefined ? value : { ...value, key };
}

/** Every batch item type of every family whose operation writes, with its item and result schemas. */
function writeItems() {
  return FAMILIES.flatMap((family) => {
    const bound = family.bind({ maxValueBytes: 1024 });
    const operation = schemas()[`${capitalised(family.name)}BatchOperation`] as {
      discriminator: { mapping: Record<string, string> };
    };
    return Object.entries(operation.discriminator.mapping).map(([type, ref]) => {
      const schema = named(ref);
      const op = bound.batch.get(type)?.(item(schema, 'k') as never);
      return { family, type, schema, writes: op?.writes ?? false };
    });
  }).filter((i) => i.writes);
}

test('every write item of every family takes if_match, and its result can carry the etag', () => {
  const results = (family: string) =>
    ((schemas()[`${capitalised(family)}BatchResult`] as Schema).oneOf as Schema[]).map((r) => named(r.$ref));
  const items = writeItems();
  // Strings, hashes and sets have 17 write items between them; new families add theirs.
  expect(items.length).toBeGreaterThanOrEqual(17);
  const missing = items.flatMap(({ family, type, schema }) => {
    const result = results(family.name).find(
      (r) => (r.properties as Record<string, Schema> | undefined)?.type?.const === type,
    );
    return [
      ...((schema.properties as Schema).if_match ? [] : [`${family.name} ${type}: no if_match`]),
      ...((result?.properties as Schema | undefined)?.etag ? [] : [`${family.name} ${type}: no etag`]),
    ];
  });
  expect(missing).toEqual([]);
});

test('when a write item lists another ETag, then it alone fails with precondition_failed and the key is unchanged', async () => {
  const problems: string[] = [];
  for (const { family, type, schema } of writeItems()) {
    const key = `i-${family.name}-${type}`;
    await t.raw.call(family.sample[0], raw(key), ...family.sample.slice(1));
    const before = await t.raw.dumpBuffer(raw(key));
    const current = await etagOf(family.name, key);
    const res = await batch(family.name, [
      { ...item(schema, key), if_match: '"0000"' },
      { type: 'exists', key },
    ]);
    const [failed, other] = res.body.results ?? [];
    if (failed?.error?.error !== 'precondition_failed' || failed.error.etag !== current || !other?.success)
      problems.push(`${family.name} ${type}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    expectSchema(`${capitalised(family.name)}BatchResponse`, res.body);
    if (!(await t.raw.dumpBuffer(raw(key)))?.equals(before as Buffer))
      problems.push(`${type} changed ${key}`);
    const ok = await batch(family.name, [{ ...item(schema, key), if_match: current }]);
    const [result] = ok.body.results;
    if (result.error?.error === 'precondition_failed')
      problems.push(`${family.name} ${type}: refused its ETag`);
    if (result.success && (await t.raw.exists(raw(key))) && result.etag !== (await etagOf(family.name, key)))
      problems.push(`${family.name} ${type}: answered etag ${result.etag}`);
    expectSchema(`${capitalised(family.name)}BatchResponse`, ok.body);
  }
  expect(problems).toEqual([]);
});

test('when a batch reads a whole key, then the get result carries the same ETag as GET', async () => {
  await t.raw.hset(raw('g'), 'a', '1');
  const res = await batch('hash', [{ type: 'get', key: 'g' }]);
  expect(res.body.results[0].etag).toBe(await etagOf('hash', 'g'));
});

describe('"atomic": "all"', () => {
  test('when one if_match fails, then 412 names the item, nothing is applied, and the header has its ETag', async () => {
    await t.raw.hset(raw('a1'), 'n', '1');
    await t.raw.hset(raw('a2'), 'n', '1');
    const [e1, e2] = [await etagOf('hash', 'a1'), await etagOf('hash', 'a2')];
    await t.raw.hset(raw('a2'), 'n', '2');
    const res = await batch(
      'hash',
      [
        { type: 'setField', key: 'a1', field: 'n', value: '10', if_match: e1 },
        { type: 'set', key: 'a3', fields: { n: '1' } },
        { type: 'setField', key: 'a2', field: 'n', value: '10', if_match: e2 },
      ],
      'all',
    );
    expect([res.status, res.body.error, res.body.details?.index]).toEqual([412, 'precondition_failed', 2]);
    expect(res.headers.etag).toBe(await etagOf('hash', 'a2'));
    expect(await t.raw.hget(raw('a1'), 'n')).toBe('1');
    expect(await t.raw.exists(raw('a3'))).toBe(0);
  });

  test('when every if_match holds against the keys before the batch, then every item applies', async () => {
    await t.raw.set(raw('s1'), 'x');
    const e1 = await etagOf('string', 's1');
    const res = await batch(
      'string',
      [
        { type: 'set', key: 's1', value: 'y', if_match: e1 },
        { type: 'set', key: 's2', value: 'z' },
        // Compared with s1 as it was before the batch, not after the first item.
        { type: 'expire', key: 's1', ttl: 100, if_match: e1 },
      ],
      'all',
    );
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { success: boolean }) => r.success)).toEqual([true, true, true]);
    expect(res.body.results[0].etag).toBe(await etagOf('string', 's1'));
    expect(await t.raw.get(raw('s2'))).toBe('z');
  });

  test('without it, a failing if_match fails its item alone, and a later item sees the earlier ones', async () => {
    await t.raw.set(raw('p1'), 'x');
    const e1 = await etagOf('string', 'p1');
    const res = await batch('string', [
      { type: 'set', key: 'p1', value: 'y', if_match: e1 },
      { type: 'set', key: 'p1', value: 'z', if_match: e1 },
      { type: 'set', key: 'p2', value: 'w' },
    ]);
    expect(res.body.results.map((r: { success: boolean }) => r.success)).toEqual([true, false, true]);
    expect(res.body.results[1].error.etag).toBe(res.body.results[0].etag);
    expect(await t.raw.get(raw('p1'))).toBe('y');
  });

  test('when atomic has another value, then 400 invalid_request', async () => {
    const res = await api()
      .post('/store/string/batch')
      .send({ operations: [{ type: 'get', key: 'x' }], atomic: 'some' });
    expect([res.status, res.body.error]).toEqual([400, 'invalid_request']);
  });
});
