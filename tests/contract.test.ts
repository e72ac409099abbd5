// The contract test: what the app serves and what openapi.yaml describes agree, in both directions.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Express } from 'express';
import request from 'supertest';
import { stringify } from 'yaml';
import { ERROR_STATUS } from '../src/errors';
import { Contract, deref } from '../src/http/contract';
import { PREFIXES } from '../src/http/routes';
import { openapiDocument, type TestApp, testApp } from './support/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('contract');
});
afterAll(() => t.close());

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
  matchers?: unknown[];
}

/** Every `METHOD /path` Express would route, with `:param` turned back into `{param}`. */
function expressRoutes(app: Express): string[] {
  const found: string[] = [];
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        const paths = [layer.route.path].flat();
        for (const method of Object.keys(layer.route.methods)) {
          if (method === '_all') continue;
          for (const path of paths)
            found.push(`${method.toUpperCase()} ${path.replace(/[:*](\w+)/g, '{$1}')}`);
        }
      } else if (layer.handle?.stack) {
        walk(layer.handle.stack);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack);
  return found;
}

/** Every operation under each prefix (`/store` and its alias `/api`), and the pages outside them (`GET /`). */
const documented = () => {
  const paths = openapiDocument().paths as Record<string, Record<string, unknown>>;
  const pages = Object.entries(paths)
    .filter(([path]) => !path.startsWith('/store/'))
    .flatMap(([path, item]) =>
      Object.keys(deref<Record<string, unknown>>(openapiDocument(), item))
        .filter((key) => ['get', 'post', 'put', 'patch', 'delete'].includes(key))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
  const operations = t.context.contract.operations.flatMap((o) =>
    PREFIXES.map((prefix) => `${o.method.toUpperCase()} ${o.path.replace(/^\/store/, prefix)}`),
  );
  return [...operations, ...pages];
};

describe('routes and openapi.yaml', () => {
  test('every route the apps serve is in openapi.yaml', () => {
    const served = [t.data, ...(t.admin ? [t.admin] : [])].flatMap(expressRoutes);
    const extra = served.filter((r) => !documented().includes(r) && !r.match(/ \/(docs|openapi\.yaml)/));
    expect(extra).toEqual([]);
  });

  test('every operation in openapi.yaml is served', () => {
    const served = new Set([t.data, ...(t.admin ? [t.admin] : [])].flatMap(expressRoutes));
    expect(documented().filter((r) => !served.has(r))).toEqual([]);
  });

  test('as documented, every GET also answers HEAD: the same status, no body', async () => {
    const gets = t.context.served.filter(
      (o) => o.method === 'get' && !o.path.startsWith('/store/admin/metrics'),
    );
    const paths = ['/', ...gets.map((o) => o.path.replace('{key}', 'head-k').replace('{field}', 'f'))];
    for (const path of paths) {
      const [get, head] = [await request(t.data).get(path), await request(t.data).head(path)];
      expect([path, head.status, head.text ?? '']).toEqual([path, get.status, '']);
    }
  });

  test('every operation declares a permission and an operationId', () => {
    for (const op of t.context.contract.operations) {
      expect(['read', 'write', 'admin']).toContain(op.permission);
      expect(op.id).toMatch(/^[a-z][A-Za-z]+$/);
    }
  });
});

describe('error types', () => {
  /** ErrorType lists each type once: its const, its status (`x-status`) and when it is given. */
  const errorTypes = () =>
    (
      (openapiDocument().components as { schemas: Record<string, Record<string, unknown>> }).schemas
        .ErrorType as { oneOf: { const: string; 'x-status': number; description: string }[] }
    ).oneOf;

  test('the error types in openapi.yaml are exactly those of the code, with the same statuses', () => {
    expect(Object.fromEntries(errorTypes().map((e) => [e.const, e['x-status']]))).toEqual(ERROR_STATUS);
    expect(errorTypes().length).toBe(Object.keys(ERROR_STATUS).length);
    for (const e of errorTypes()) expect([e.const, e.description.length > 10]).toEqual([e.const, true]);
  });

  test('the error table of docs/guide.md lists exactly the error types of the code, with the same statuses', () => {
    const guide = readFileSync(join(__dirname, '..', 'docs', 'guide.md'), 'utf8');
    const rows = [...guide.matchAll(/^\| (\d{3}) \| (`\w+`(?:, `\w+`)*) \|$/gm)];
    const table = rows.flatMap(([, status, types]) =>
      (types as string).split(', ').map((type) => [type.slice(1, -1), Number(status)]),
    );
    expect(Object.fromEntries(table)).toEqual(ERROR_STATUS);
    expect(table.length).toBe(Object.keys(ERROR_STATUS).length);
  });

  test('every x-error in openapi.yaml names a known error type', () => {
    const names: string[] = [];
    const walk = (v: unknown) => {
      if (v && typeof v === 'object') {
        for (const [k, child] of Object.entries(v)) {
          if (k === 'x-error') names.push(child as string);
          else walk(child);
        }
      }
    };
    walk(openapiDocument());
    expect(names.filter((n) => !(n in ERROR_STATUS))).toEqual([]);
  });

  test('each rule that messages quote is written once, on the schema that reports its error type', () => {
    const schemas = (openapiDocument().components as { schemas: Record<string, Record<string, string>> })
      .schemas;
    const ruled = Object.entries(schemas).filter(([, s]) => s['x-rule'] !== undefined);
    expect(ruled.map(([name, s]) => [name, s['x-error']])).toEqual([
      ['Key', 'invalid_key'],
      ['Ttl', 'invalid_ttl'],
    ]);
  });
});

describe('batch item types', () => {
  type Schema = {
    oneOf?: { $ref: string }[];
    discriminator?: { propertyName: string; mapping?: Record<string, string> };
    properties?: Record<string, { const?: string }>;
  };
  const schemas = () => (openapiDocument().components as { schemas: Record<string, Schema> }).schemas;

  test('each discriminator maps every item type to the oneOf schema whose type is that const', () => {
    const withTags = Object.entries(schemas()).filter(([, s]) => s.discriminator);
    expect(withTags.map(([name]) => name).sort()).toEqual([
      'HashBatchOperation',
      'ListBatchOperation',
      'SetBatchOperation',
      'StringBatchOperation',
      'ZsetBatchOperation',
    ]);
    for (const [name, schema] of withTags) {
      const mapping = schema.discriminator?.mapping ?? {};
      expect([name, Object.values(mapping)]).toEqual([name, schema.oneOf?.map((o) => o.$ref)]);
      for (const [tag, ref] of Object.entries(mapping))
        expect([name, tag, schemas()[ref.split('/').pop() as string]?.properties?.type?.const]).toEqual([
          name,
          tag,
          tag,
        ]);
    }
  });
});

describe('shared parts by $ref', () => {
  test('when a path item, a parameter and a request body are refs, then the loader compiles them as if written out', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'contract-')), 'openapi.yaml');
    writeFileSync(
      file,
      stringify({
        openapi: '3.1.0',
        info: { title: 't', version: '1' },
        paths: { '/store/thing/{key}/expire': { $ref: '#/components/pathItems/Expire' } },
        components: {
          schemas: {
            Key: { type: 'string', pattern: '^k+$', 'x-error': 'invalid_key', 'x-rule': 'a key is k' },
          },
          parameters: {
            Key: { name: 'key', in: 'path', required: true, schema: { $ref: '#/components/schemas/Key' } },
          },
          requestBodies: {
            Expire: {
              required: true,
              content: {
                'application/json': {
                  schema: { type: 'object', required: ['ttl'], properties: { ttl: { type: 'integer' } } },
                },
              },
            },
          },
          pathItems: {
            Expire: {
              parameters: [{ $ref: '#/components/parameters/Key' }],
              post: {
                operationId: 'expireThing',
                'x-permission': 'write',
                requestBody: { $ref: '#/components/requestBodies/Expire' },
                responses: {},
              },
            },
          },
        },
      }),
    );
    const op = new Contract(file).operation('post', '/store/thing/{key}/expire');
    expect([op.id, op.permission, op.hasBody]).toEqual(['expireThing', 'write', true]);
    expect(() => op.validate({ params: { key: 'x' }, headers: {}, body: { ttl: 1 } })).toThrow(
      "key 'x' is not a valid key: a key is k",
    );
    expect(() => op.validate({ params: { key: 'k' }, headers: {}, body: {} })).toThrow("'ttl' is required");
  });
});
