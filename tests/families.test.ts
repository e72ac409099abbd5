// The list of families against the contract and itself: batch names, single-key operations, permissions, new items.
import request from 'supertest';
import { FAMILIES } from '../src/families';
import type { RequestInput } from '../src/http/contract';
import { openapiDocument, type TestApp, testApp } from './support/app';
import { expectSchema } from './support/schemas';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('families');
});
afterAll(() => t.close());

const LIMITS = { maxValueBytes: 1024 };
const schemas = () =>
  (openapiDocument().components as { schemas: Record<string, Record<string, unknown>> }).schemas;
const capitalised = (name: string) => name[0]?.toUpperCase() + name.slice(1);

/** A request that every route of every family accepts. */
const SAMPLE: RequestInput = {
  params: { key: 'k', field: 'f', member: 'm', index: '0' },
  headers: {},
  query: {},
  body: { value: 'v', fields: { f: 'v' }, members: ['m'], values: ['v'], ttl: 5, keys: ['a', 'b'] },
};

describe.each(FAMILIES.map((f) => [f.name, f] as const))('the %s family', (name, family) => {
  const operation = () =>
    schemas()[`${capitalised(name)}BatchOperation`] as {
      discriminator: { mapping: Record<string, string> };
      oneOf: { $ref: string }[];
    };

  test('when its batch names are read, then they are exactly the item types and item schemas openapi.yaml lists', () => {
    expect([...Object.keys(family.batch)].sort()).toEqual(
      Object.keys(operation().discriminator.mapping).sort(),
    );
    const itemType = ({ $ref }: { $ref: string }) =>
      (schemas()[$ref.split('/').pop() as string] as { properties: { type: { const: string } } }).properties
        .type.const;
    expect(operation().oneOf.map(itemType).sort()).toEqual(Object.keys(family.batch).sort());
  });

  test('when a route works on one key, then its operation is also a batch item', () => {
    const offered = new Set(Object.values(family.batch));
    const singleKey = family.bind(LIMITS).routes.filter((r) => r.path.startsWith(`/store/${name}/{key}`));
    expect(singleKey.filter((r) => !offered.has(r.op)).map((r) => `${r.method} ${r.path}`)).toEqual([]);
  });

  test('when a route writes, then openapi.yaml asks for write, and read otherwise', () => {
    for (const route of family.bind(LIMITS).routes) {
      const { permission } = t.context.contract.operation(route.method, route.path);
      expect([route.method, route.path, permission]).toEqual([
        route.method,
        route.path,
        route.build(SAMPLE).writes ? 'write' : 'read',
      ]);
    }
  });
});

describe('the batch items added so that every family offers every single-key operation', () => {
  const batch = (family: string, operations: unknown[]) =>
    request(t.data).post(`/store/${family}/batch`).send({ operations });

  test('when a hash batch asks for ttl and persist, then they answer like their endpoints', async () => {
    const res = await batch('hash', [
      { type: 'set', key: 'h', fields: { f: 'v' }, ttl: 100 },
      { type: 'ttl', key: 'h' },
      { type: 'persist', key: 'h' },
      { type: 'ttl', key: 'h' },
      { type: 'persist', key: 'h-missing' },
    ]);
    expect(res.status).toBe(200);
    expectSchema('HashBatchResponse', res.body);
    expect(res.body.results.slice(1)).toEqual([
      { type: 'ttl', success: true, ttl: 100 },
      { type: 'persist', success: true, ttl: -1 },
      { type: 'ttl', success: true, ttl: -1 },
      expect.objectContaining({
        type: 'persist',
        success: false,
        error: expect.objectContaining({ status: 404 }),
      }),
    ]);
  });

  test('when a set batch asks for exists, ttl and persist, then they answer like the other families', async () => {
    const res = await batch('set', [
      { type: 'exists', key: 's' },
      { type: 'add', key: 's', members: ['m'], ttl: 100 },
      { type: 'exists', key: 's' },
      { type: 'ttl', key: 's' },
      { type: 'persist', key: 's' },
      { type: 'ttl', key: 's' },
      { type: 'ttl', key: 's-missing' },
    ]);
    expect(res.status).toBe(200);
    expectSchema('SetBatchResponse', res.body);
    expect(res.body.results).toEqual([
      { type: 'exists', success: true, exists: false },
      expect.objectContaining({ type: 'add', success: true }),
      { type: 'exists', success: true, exists: true },
      { type: 'ttl', success: true, ttl: 100 },
      { type: 'persist', success: true, ttl: -1 },
      { type: 'ttl', success: true, ttl: -1 },
      expect.objectContaining({
        type: 'ttl',
        success: false,
        error: expect.objectContaining({ status: 404 }),
      }),
    ]);
  });

  test('when a set batch item meets a string, then exists and ttl fail with wrong_type, as on the endpoints', async () => {
    await t.raw.set(`${t.prefix}s-string`, 'v');
    const res = await batch('set', [
      { type: 'exists', key: 's-string' },
      { type: 'ttl', key: 's-string' },
    ]);
    const errors = res.body.results.map((r: { error?: { error: string } }) => r.error?.error);
    expect(errors).toEqual(['wrong_type', 'wrong_type']);
  });
});
