// A family's batch schemas, derived from its routes: each item takes its route's path, query and body inputs,
// each result is its route's success body plus `type`, `success` (and `etag`), shared when families agree.
import { isObject, type Json, ref, refName, resolve } from './tree';

/** One batch item type of a family and what the generator knows of its route. */
export interface BatchEntry {
  readonly type: string;
  readonly method: string;
  /** The whole path: /store/string/{key}/incr. */
  readonly path: string;
  readonly operation: Json;
  readonly writes: boolean;
  /** The whole-key read (GET /{key}): answers the key's ETag, also as an item. */
  readonly wholeRead: boolean;
}

export interface BatchFamily {
  readonly title: string;
  readonly noun: string;
  readonly entries: readonly BatchEntry[];
}

const schemaRef = (name: string) => ref('schemas', name);
const hasSchema = (doc: Json, name: string) => name in (((doc.components as Json).schemas as Json) ?? {});
const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** The fields of one item: `type`, `key`, the other path parameters, the query parameters, the body's fields. */
function itemSchema(doc: Json, e: BatchEntry): Json {
  const properties: Json = { type: { const: e.type }, key: schemaRef('Key') };
  const required = ['type', 'key'];
  for (const p of (e.operation.parameters as Json[] | undefined) ?? []) {
    const param = resolve(doc, p);
    if (param.in !== 'path' && param.in !== 'query') continue;
    const name = param.name as string;
    // `x-batch: false`: the route's alone (a page's cursor); a batch item does not take it.
    if (name === 'key' || param['x-batch'] === false) continue;
    // A parameter names its batch form with x-batch when a path or query string's text differs from JSON's.
    properties[name] = param['x-batch'] ?? param.schema;
    if (param.required) required.push(name);
  }
  const body = e.operation.requestBody ? resolve(doc, e.operation.requestBody) : undefined;
  const bodySchema = (body?.content as Json | undefined)?.['application/json'];
  if (isObject(bodySchema)) {
    const schema = resolve(doc, bodySchema.schema);
    for (const [name, s] of Object.entries((schema.properties as Json) ?? {}))
      if (!(isObject(s) && s['x-batch'] === false)) properties[name] = s;
    required.push(...((schema.required as string[]) ?? []));
  }
  if (e.writes) properties.if_match = schemaRef('BatchIfMatch');
  // Once the contract declares value encodings, every item may name its own (else the batch's).
  if (hasSchema(doc, 'Encoding')) properties.encoding ??= schemaRef('Encoding');
  return { type: 'object', additionalProperties: false, required: [...new Set(required)], properties };
}

/** The success body of the route (its 200, else 201) as a schema of its own. */
function successSchema(doc: Json, e: BatchEntry): { name: string; schema: Json } {
  const responses = e.operation.responses as Json;
  const response = resolve(doc, responses['200'] ?? responses['201']);
  const media = (response.content as Json | undefined)?.['application/json'];
  const name = isObject(media) ? refName(media.schema) : undefined;
  if (!name || !isObject(media))
    throw new Error(`contract: ${e.method} ${e.path} has no JSON success schema for its batch item`);
  return { name, schema: resolve(doc, media.schema) };
}

function resultSchema(doc: Json, e: BatchEntry): Json {
  const { name, schema } = successSchema(doc, e);
  const properties: Json = { type: { const: e.type }, success: schemaRef('Success') };
  for (const [p, s] of Object.entries((schema.properties as Json) ?? {}))
    if (!(isObject(s) && s['x-batch'] === false))
      properties[p] ??= { $ref: `#/components/schemas/${name}/properties/${p}` };
  if (e.writes || e.wholeRead) properties.etag = schemaRef('BatchEtag');
  return {
    type: 'object',
    additionalProperties: false,
    required: [...new Set(['type', 'success', ...((schema.required as string[]) ?? [])])],
    properties,
    description: `Result of a successful \`${e.type}\` item: the fields of \`${name}\` plus \`type\` and \`success\`.`,
  };
}

/**
 * Every family's batch schemas: `<Title>BatchRequest`, `...Operation`, one item and one result schema per type
 * (`Batch<Type>` / `Batch<Type>Result` when every family that has the type takes and answers the same),
 * `...Result` and `...Response`.
 */
export function batchSchemas(doc: Json, families: readonly BatchFamily[]): Json {
  const items = families.map((f) => f.entries.map((e) => ({ f, e, item: itemSchema(doc, e) })));
  const results = families.map((f) => f.entries.map((e) => resultSchema(doc, e)));
  /** The families whose item (and result) of a type are the same share one schema: `Batch<Type>`. */
  const groupOf = (i: number, j: number) => {
    const type = families[i]?.entries[j]?.type;
    const key = JSON.stringify(items[i]?.[j]?.item);
    const group: [number, number][] = [];
    items.forEach((list, a) => {
      list.forEach((x, b) => {
        if (x.e.type === type && JSON.stringify(x.item) === key) group.push([a, b]);
      });
    });
    return group;
  };
  const out: Json = {};
  families.forEach((f, i) => {
    const mapping: Json = {};
    const oneOf: Json[] = [];
    const resultRefs: Json[] = [];
    f.entries.forEach((e, j) => {
      const item = items[i]?.[j]?.item as Json;
      const result = results[i]?.[j] as Json;
      const Type = capital(e.type);
      const group = groupOf(i, j);
      const commonItem = group.length > 1;
      const commonResult =
        commonItem && group.every(([a, b]) => JSON.stringify(results[a]?.[b]) === JSON.stringify(result));
      const itemName = commonItem ? `Batch${Type}` : `${f.title}Batch${Type}`;
      const resultName = commonResult ? `Batch${Type}Result` : `${f.title}Batch${Type}Result`;
      const like = commonItem ? e.path.replace(/^\/store\/\w+\//, '/store/{family}/') : e.path;
      out[itemName] = {
        ...item,
        description: `Like \`${e.method.toUpperCase()} ${like}\`. Result: \`${commonItem && !commonResult ? `<Family>Batch${Type}Result` : resultName}\`.`,
      };
      out[resultName] = result;
      mapping[e.type] = `#/components/schemas/${itemName}`;
      oneOf.push(schemaRef(itemName));
      resultRefs.push(schemaRef(resultName));
    });
    out[`${f.title}BatchRequest`] = {
      type: 'object',
      additionalProperties: false,
      required: ['operations'],
      properties: {
        operations: {
          type: 'array',
          minItems: 1,
          maxItems: 1000,
          items: schemaRef(`${f.title}BatchOperation`),
          description: `1..1,000 ${f.noun} operations (\`SVC_BATCH_MAX_OPERATIONS\`), run in this order in one transaction.`,
        },
        atomic: schemaRef('BatchAtomic'),
        ...(hasSchema(doc, 'Encoding') ? { encoding: schemaRef('Encoding') } : {}),
      },
    };
    out[`${f.title}BatchOperation`] = {
      type: 'object',
      required: ['type'],
      discriminator: { propertyName: 'type', mapping },
      oneOf,
      description: `One ${f.noun} batch operation; \`type\` selects which, and the other properties are those of that type (each is like the route its description names). The item types are the keys of \`discriminator.mapping\`.`,
    };
    out[`${f.title}BatchResult`] = {
      oneOf: [...resultRefs, schemaRef('BatchItemFailure')],
      description:
        'One result per operation, in request order: the success shape of its type, or `BatchItemFailure`.',
    };
    out[`${f.title}BatchResponse`] = {
      type: 'object',
      additionalProperties: false,
      required: ['results', 'atomic'],
      properties: {
        results: {
          type: 'array',
          items: schemaRef(`${f.title}BatchResult`),
          description: 'One entry per operation, in request order.',
        },
        atomic: {
          type: 'boolean',
          description:
            '`true` when the whole batch ran as one atomic script call (standalone Redis, Sentinel, or Cluster with every key in one hash slot); `false` on Redis Cluster when the keys span several hash slots (each slot is then atomic on its own).',
        },
      },
      description: `Answer of the ${f.noun} batch endpoint.`,
    };
  });
  return out;
}
