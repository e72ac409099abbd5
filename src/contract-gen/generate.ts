// Writes openapi.yaml from the families' declarations, the error table and the hand-written fragments in contract/.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Document, isPair, isScalar, parse, visit } from 'yaml';
import { ERROR_STATUS, type ErrorType } from '../errors';
import { FAMILIES } from '../families';
import type { Family } from '../families/family';
import { KEY_BATCH } from '../families/keys';
import type { Method, Permission, RequestInput } from '../http/contract';
import { type BatchEntry, batchSchemas } from './batch';
import {
  badRequest,
  completeOperation,
  type OperationFacts,
  pathParameters,
  withStandardHeaders,
} from './operations';
import {
  closedObjects,
  fill,
  isObject,
  type Json,
  jsonBody,
  merge,
  refName,
  resolve,
  withJsonBodies,
  withJsonPaths,
  withoutGeneratorKeys,
} from './tree';

export const ROOT = path.join(__dirname, '..', '..');
export const CONTRACT_DIR = path.join(ROOT, 'contract');
export const CONTRACT_FILE = path.join(ROOT, 'openapi.yaml');

const METHODS: Method[] = ['get', 'post', 'put', 'patch', 'delete'];
/** The operations every family has (families/keys.ts): the same batch item in each. */
const KEY_OPS = new Set(Object.values(KEY_BATCH) as string[]);

/** A family's names as the contract writes them (`family:` in contract/families/<name>.yaml). */
interface FamilyNames {
  /** Schema prefix: String, Hash, Zset. */
  title: string;
  /** In prose: string, hash, sorted set. */
  noun: string;
  tag: string;
  /** Path parameter -> parameter component, where the family's differs from the default (`member: ZsetMember`). */
  parameters?: Record<string, string>;
}

interface Fragment {
  family?: FamilyNames;
  /** The tag of every operation of a non-family fragment. */
  tag?: string;
  /** Responses every operation of a non-family fragment answers, besides its own (its own win). */
  responses?: Json;
  paths?: Json;
  components?: Record<string, Json>;
}

/** A fragment, its response and request bodies in full (fragments write them short, see jsonBody). */
function read(file: string): Json {
  const fragment = closedObjects(parse(readFileSync(path.join(CONTRACT_DIR, file), 'utf8'))) as Json;
  if (fragment.paths) fragment.paths = withJsonPaths(fragment.paths);
  if (isObject(fragment.operations))
    fragment.operations = Object.fromEntries(
      Object.entries(fragment.operations).map(([k, op]) => [k, withJsonBodies(op)]),
    );
  if (isObject(fragment.batch)) fragment.batch = withJsonPaths({ batch: fragment.batch }).batch;
  const components = fragment.components as Record<string, Json> | undefined;
  for (const kind of ['responses', 'requestBodies']) {
    const entries = components?.[kind];
    if (components && entries)
      components[kind] = Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, jsonBody(v)]));
  }
  return fragment;
}

/** The hand-written parts: every fragment's components, merged; a name written twice is an error. */
function collectComponents(fragments: Record<string, Fragment>): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [file, fragment] of Object.entries(fragments)) {
    for (const [kind, entries] of Object.entries(fragment.components ?? {})) {
      out[kind] ??= {};
      for (const [name, value] of Object.entries(entries)) {
        if ((out[kind] as Json)[name] !== undefined)
          throw new Error(`contract/${file}: ${kind}.${name} twice`);
        (out[kind] as Json)[name] = value;
      }
    }
  }
  return out;
}

/** A value that satisfies `schema`: its const, example, default, first choice, or the simplest of its type. */
function sample(doc: Json, schema: unknown): unknown {
  const s = resolve(doc, schema);
  if ('const' in s) return s.const;
  if (s.example !== undefined) return s.example;
  if (s.default !== undefined) return s.default;
  if (Array.isArray(s.enum)) return s.enum[0];
  const choice = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (choice?.length) return sample(doc, choice[0]);
  if (s.type === 'integer' || s.type === 'number') return s.minimum ?? 1;
  if (s.type === 'boolean') return false;
  if (s.type === 'array')
    return Array.from({ length: Math.max(1, Number(s.minItems ?? 1)) }, () => sample(doc, s.items));
  if (s.type === 'object' || s.properties) {
    const props = (s.properties as Json) ?? {};
    return Object.fromEntries(((s.required as string[]) ?? []).map((p) => [p, sample(doc, props[p])]));
  }
  return 'x';
}

/** Whether the route's operation writes: built, as a request would build it, from a sample request. */
/** What the generator reads of a built operation: whether it writes, which answer fields hold stored values. */
interface Built {
  readonly writes: boolean;
  readonly values?: readonly string[];
}

/** The route's operation, built as a request would build it, from a sample request. */
function built(doc: Json, build: (input: RequestInput) => Built, op: Json, where: string): Built {
  const params: Record<string, string> = { key: 'k', field: 'f', member: 'm', index: '0' };
  let body: Json = {};
  const media = op.requestBody
    ? ((resolve(doc, op.requestBody).content as Json)['application/json'] as Json | undefined)
    : undefined;
  if (media) {
    const example = Object.values((media.examples as Record<string, Json>) ?? {})[0]?.value ?? media.example;
    body = (example ?? sample(doc, media.schema)) as Json;
  } else if (op.requestBody) {
    // A body that is not JSON (raw bytes) reaches the route as a Buffer.
    body = Buffer.from('x') as unknown as Json;
  }
  try {
    return build({ params, headers: {}, query: {}, body });
  } catch (err) {
    throw new Error(`contract: ${where} does not build from a sample request: ${(err as Error).message}`);
  }
}

/** The route that runs an operation, as the batch item that runs it is derived from it. */
type RouteOf = Omit<BatchEntry, 'type' | 'wholeRead'>;

/** A path item (as written, if it is) with its path parameters declared. */
function withParameters(p: string, item: unknown, names?: Record<string, string>): Json {
  const written = (item as Json | undefined) ?? {};
  const parameters = written.parameters ?? pathParameters(p, names);
  return { ...written, ...((parameters as Json[]).length ? { parameters } : {}) };
}

interface FamilyPaths {
  paths: Json;
  /** Batch item type -> the operation it runs. */
  batch: { type: string; op: string; wholeRead: boolean }[];
  ops: Record<string, RouteOf>;
  responses: Json;
}

/** A family's path items: its fragment's operations over the templates of contract/family.yaml, completed. */
function familyPaths(doc: Json, family: Family, fragment: Fragment, templates: Json): FamilyPaths {
  const names = fragment.family;
  if (!names) throw new Error(`contract/families/${family.name}.yaml: no family: names`);
  const t = fill(templates, { family: family.name, ...names } as unknown as Record<string, string>);
  const written = { ...(fragment.paths ?? {}) };
  const facts = (p: string, extra: Partial<OperationFacts> & { method: string }): OperationFacts => ({
    path: p,
    tag: names.tag,
    store: true,
    title: names.title,
    ...extra,
  });
  const paths: Json = {};
  const bound = family.bind({ maxValueBytes: 1 << 20 });
  const ops: Record<string, RouteOf> = {};
  const wholeRead = bound.routes.find(
    (r) => r.method === 'get' && r.path.endsWith('/{key}') && !r.path.slice(0, -6).includes('{'),
  )?.op;
  for (const route of bound.routes) {
    paths[route.path] ??= withParameters(route.path, written[route.path], names.parameters);
    const item = paths[route.path] as Json;
    const own = (written[route.path] as Json | undefined)?.[route.method];
    const template = (t.operations as Json)[route.op];
    if (!own && !template) throw new Error(`contract: ${route.method} ${route.path} is in no fragment`);
    const op = merge(template, own) as Json;
    const run = built(doc, route.build, op, `${route.method.toUpperCase()} ${route.path}`);
    const w = run.writes;
    const pathParams = (item.parameters as Json[]) ?? [];
    item[route.method] = completeOperation(
      op,
      facts(route.path, {
        method: route.method,
        permission: w ? 'write' : 'read',
        wholeRead: route.method === 'get' && route.op === wholeRead,
        answersValues: (run.values?.length ?? 0) > 0,
      }),
      doc,
      pathParams,
    );
    // The path item's parameters ({key}, {field}) are the operation's too.
    const operation = item[route.method] as Json;
    const parameters = [...((item.parameters as Json[]) ?? []), ...((operation.parameters as Json[]) ?? [])];
    ops[route.op] ??= {
      method: route.method,
      path: route.path,
      operation: { ...operation, parameters },
      writes: w,
    };
  }
  const batch = Object.entries(family.batch).map(([type, op]) => ({ type, op, wholeRead: op === wholeRead }));
  const batchItem = merge(t.batch, written[family.batchPath]) as Json;
  const post = completeOperation(
    batchItem.post as Json,
    facts(family.batchPath, {
      method: 'post',
      permission: 'write',
      forbidden: 'ForbiddenBatch',
      batch: true,
    }),
    doc,
  );
  paths[family.batchPath] = { ...batchItem, post };
  for (const p of Object.keys(written))
    if (!paths[p])
      throw new Error(`contract/families/${family.name}.yaml: ${p} is not a route of the family`);
  return { paths, batch, ops, responses: ((t.components as Json)?.responses as Json) ?? {} };
}

/** The path items of a fragment that is no family (service, keys, changes, admin), completed. */
function otherPaths(doc: Json, fragment: Fragment): Json {
  const out: Json = {};
  for (const [p, item] of Object.entries(fragment.paths ?? {})) {
    const completed = withParameters(p, item);
    for (const method of METHODS) {
      const written = completed[method] as Json | undefined;
      if (!written) continue;
      const op = fragment.responses
        ? { ...written, responses: { ...fragment.responses, ...(written.responses as Json) } }
        : written;
      const store = p.startsWith('/store/');
      const permission: Permission | undefined = !store
        ? undefined
        : p.startsWith('/store/admin/')
          ? 'admin'
          : method === 'get'
            ? 'read'
            : 'write';
      const facts = { path: p, method, tag: fragment.tag ?? 'service', store, permission };
      completed[method] = completeOperation(op, facts, doc, (completed.parameters as Json[]) ?? []);
    }
    out[p] = completed;
  }
  return out;
}

/** A batch's 400, from its (generated) request schema: one bad item fails the whole batch. */
function batchBadRequest(doc: Json, post: Json): void {
  const responses = post.responses as Json;
  if (responses['400'] !== undefined) return;
  const lead =
    'One bad item fails the whole batch before anything reaches Redis (its index in the message and in `details.index`); nothing was changed.';
  responses['400'] = badRequest(doc, post, [], lead);
  post.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
}

/** The ErrorType schema: every type of the error table (src/errors.ts) with its status and its description. */
function errorType(descriptions: Json): Json {
  const missing = Object.keys(ERROR_STATUS).filter((t) => typeof descriptions[t] !== 'string');
  const unknown = Object.keys(descriptions).filter((t) => !(t in ERROR_STATUS));
  if (missing.length || unknown.length)
    throw new Error(
      `contract/errors.yaml: no description for ${missing.join(', ')}; unknown ${unknown.join(', ')}`,
    );
  return {
    type: 'string',
    description: 'The type of an error. Each type always comes with the same HTTP status, its `x-status`.',
    oneOf: Object.entries(ERROR_STATUS).map(([type, status]) => ({
      const: type,
      'x-status': status,
      description: descriptions[type],
    })),
  };
}

/** An example error body as the service writes it: its status from the error table, a timestamp, a request id. */
function errorBody(example: unknown): unknown {
  if (!isObject(example) || typeof example.error !== 'string') return example;
  const { error, message, status, timestamp, request_id, ...rest } = example;
  return {
    error,
    message,
    status: status ?? ERROR_STATUS[error as ErrorType],
    timestamp: timestamp ?? '2025-01-15T10:30:00.000Z',
    request_id: request_id ?? '5f0c6a8e-2c1b-4f7e-9a3d-1b2c3d4e5f60',
    ...rest,
  };
}

/** A response whose body is an `Error`, with its examples written in full (fragments give error and message). */
function withErrorExamples(response: unknown): unknown {
  const media = isObject(response) ? (response.content as Json | undefined)?.['application/json'] : undefined;
  if (!isObject(media) || refName(media.schema) !== 'Error') return response;
  const out: Json = { ...media };
  if (media.example !== undefined) out.example = errorBody(media.example);
  if (isObject(media.examples))
    out.examples = Object.fromEntries(
      Object.entries(media.examples).map(([k, e]) => [
        k,
        isObject(e) ? { ...e, value: errorBody(e.value) } : e,
      ]),
    );
  return {
    ...(response as Json),
    content: { ...((response as Json).content as Json), 'application/json': out },
  };
}

/** Every response of the document with its error examples in full. */
function completeErrorExamples(doc: Json): void {
  const components = doc.components as Record<string, Json>;
  const responses = components.responses as Json;
  for (const [name, r] of Object.entries(responses)) responses[name] = withErrorExamples(r);
  for (const item of Object.values(doc.paths as Json))
    for (const method of METHODS) {
      const op = (item as Json)[method] as Json | undefined;
      const rs = op?.responses as Json | undefined;
      if (rs) for (const [status, r] of Object.entries(rs)) rs[status] = withErrorExamples(r);
    }
}

/** The component responses answered with a 2xx under /store: they carry the standard headers too. */
function successResponses(paths: Json): Set<string> {
  const names = new Set<string>();
  for (const [p, item] of Object.entries(paths)) {
    if (!p.startsWith('/store/')) continue;
    for (const method of METHODS) {
      const responses = ((item as Json)[method] as Json | undefined)?.responses as Json | undefined;
      for (const [status, r] of Object.entries(responses ?? {}))
        if (/^2/.test(status) && isObject(r) && typeof r.$ref === 'string')
          names.add(r.$ref.split('/').pop() as string);
    }
  }
  return names;
}

/** The contract as a document (before it is written as YAML). */
export function contractDocument(): Json {
  const top = read('document.yaml');
  const familyFiles = Object.fromEntries(
    FAMILIES.map((f) => [`families/${f.name}.yaml`, read(`families/${f.name}.yaml`) as Fragment]),
  );
  const others = (top['x-fragments'] as string[]).map((file) => [file, read(file) as Fragment] as const);
  const templates = read('family.yaml');
  const common = read('common.yaml') as Fragment;
  const components = collectComponents({
    'common.yaml': common,
    ...familyFiles,
    ...Object.fromEntries(others),
  });
  components.responses ??= {};
  components.schemas ??= {};
  const doc: Json = { ...top, paths: {}, components };
  delete doc['x-fragments'];
  const paths: Json = {};
  for (const [, fragment] of others.filter(([file]) => file === 'service.yaml'))
    Object.assign(paths, otherPaths(doc, fragment));
  const built = FAMILIES.map((family) => {
    const fragment = familyFiles[`families/${family.name}.yaml`] as Fragment;
    const result = familyPaths(doc, family, fragment, templates);
    Object.assign(paths, result.paths);
    Object.assign(components.responses as Json, result.responses);
    return { family, names: fragment.family as FamilyNames, ...result };
  });
  // A batch item runs its family's route's operation; a whole-key item without a route of its own (a set has no
  // GET .../exists) is derived from another family's, the same in every family.
  const batchFamilies = built.map(({ family, names, batch, ops }) => ({
    title: names.title,
    noun: names.noun,
    entries: batch.map(({ type, op, wholeRead }) => {
      const route = ops[op] ?? built.map((b) => b.ops[op]).find((r) => r && KEY_OPS.has(op));
      if (!route)
        throw new Error(`contract: ${family.name} batch item ${type} runs ${op}, which no route runs`);
      return { type, wholeRead, ...route };
    }),
  }));
  for (const [, fragment] of others.filter(([file]) => file !== 'service.yaml'))
    Object.assign(paths, otherPaths(doc, fragment));
  doc.paths = paths;
  const schemas = components.schemas as Json;
  schemas.ErrorType = errorType(read('errors.yaml'));
  Object.assign(schemas, batchSchemas(doc, batchFamilies));
  for (const family of FAMILIES) batchBadRequest(doc, (paths[family.batchPath] as Json).post as Json);
  const responses = components.responses as Json;
  for (const name of successResponses(paths)) {
    const r = responses[name];
    if (isObject(r) && !r.$ref) responses[name] = withStandardHeaders(r);
  }
  completeErrorExamples(doc);
  return withoutGeneratorKeys(doc) as Json;
}

const HEADER = `GENERATED by \`npm run contract\` from contract/*.yaml (the words), src/families (routes, batch items,
permissions) and src/errors.ts (error types): edit those, not this file; a test fails when it is stale.
OpenAPI 3.1; request validators are compiled from this file with AJV (JSON Schema 2020-12).
Vendor fields: x-permission (read | write | admin) on operations, x-error (error type reported when a value
fails that schema) and x-rule (the rule its error messages quote) on schemas, x-status (error type -> HTTP
status) on ErrorType.`;

/** openapi.yaml's text: refs and short lists in flow style, as a person would write them. */
export function generateContract(): string {
  const document = new Document(contractDocument());
  visit(document, {
    Map(_, node) {
      const only = node.items.length === 1 ? node.items[0] : undefined;
      if (isPair(only) && isScalar(only.key) && only.key.value === '$ref') node.flow = true;
    },
    Seq(_, node) {
      if (node.items.length <= 8 && node.items.every((i) => isScalar(i) && String(i.value).length < 40))
        node.flow = true;
    },
  });
  document.commentBefore = HEADER.split('\n')
    .map((l) => ` ${l}`)
    .join('\n');
  return document.toString({ lineWidth: 0, flowCollectionPadding: false });
}

/** Every fragment file, for the line count of what is written by hand. */
export function fragmentFiles(dir = CONTRACT_DIR): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? fragmentFiles(path.join(dir, e.name))
      : e.name.endsWith('.yaml')
        ? [path.join(dir, e.name)]
        : [],
  );
}
