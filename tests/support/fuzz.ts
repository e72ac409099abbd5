// The fuzzer's generators: requests for every operation of openapi.yaml, valid ones from its schemas, invalid by mutation.
import fc from 'fast-check';

type Json = Record<string, unknown>;
type Schema = Json & { $ref?: string };

/** One request as the fuzzer sends it; `template` is the contract's path, `path` the URL path with values in it. */
export interface FuzzRequest {
  method: string;
  template: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  /** A JSON value, raw text when `raw` (malformed JSON), or bytes (a Uint8Array, sent as application/octet-stream). */
  body?: unknown;
  raw?: boolean;
}

export interface Operation {
  method: string;
  template: string;
  parameters: { name: string; in: string; required?: boolean; schema: Schema }[];
  body?: Schema;
  /** The body is raw bytes: its only content is application/octet-stream (PUT /store/string/{key}). */
  bytes?: boolean;
}

/** In an If-Match header: the current ETag of the request's key, filled in when the request is sent. */
export const CURRENT_ETAG = '"current-etag"';

/** Keys, fields and members the fuzzer mostly uses: seeded keys of every family, so reads and writes meet data. */
export const KEYS = ['fz-string', 'fz-hash', 'fz-set', 'fz-zset', 'fz-list', 'fz-none'];
const NAMES = ['f1', 'f2', 'm1', 'm2', '1'];
/** Path segments that name another operation (`POST /store/set/union`), and dot segments URLs normalise away. */
const RESERVED = new Set(['batch', 'union', 'intersection', 'difference', '.', '..']);
/** Integers that would make a request wait (a blocking pop's `wait`, a lock's `wait_ms`, a long-poll's): never more than 0. */
const WAITS = new Set(['wait', 'wait_ms', 'timeout']);

export class Generator {
  constructor(private readonly doc: Json) {}

  /** The operations of the document, parameters and body schemas resolved. */
  operations(): Operation[] {
    const ops: Operation[] = [];
    for (const [template, rawItem] of Object.entries(this.doc.paths as Json)) {
      const item = this.resolve(rawItem as Schema);
      for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
        const op = item[method] as Json | undefined;
        if (!op) continue;
        const parameters = [
          ...((item.parameters as Schema[]) ?? []),
          ...((op.parameters as Schema[]) ?? []),
        ].map((p) => this.resolve(p) as Operation['parameters'][number]);
        const content = (this.resolve((op.requestBody ?? {}) as Schema).content ?? {}) as Json;
        const body = (content['application/json'] as Json | undefined)?.schema as Schema | undefined;
        const bytes = !body && content['application/octet-stream'] !== undefined;
        ops.push({ method, template, parameters, body, ...(bytes ? { bytes } : {}) });
      }
    }
    return ops;
  }

  /** A request the contract accepts (by its schemas; the data may still make it fail, e.g. a missing key). */
  valid(op: Operation): fc.Arbitrary<FuzzRequest> {
    const param = (p: Operation['parameters'][number]) => {
      let arb = this.value(p.schema, p.name).map(String);
      // What an HTTP client can send at all (a pattern's \s also allows a line feed).
      if (p.in === 'header') arb = arb.map((v) => v.trim()).filter(sendable);
      // A dot segment is normalised away by the URL before it is sent (`/overrides/.` is `/overrides/`).
      if (p.in === 'path') arb = arb.filter((v) => v !== '.' && v !== '..');
      // A precondition mostly names the key's ETag as it is (check() puts it in place of CURRENT_ETAG).
      if (p.name === 'If-Match') arb = fc.oneof(fc.constant(CURRENT_ETAG), arb);
      return p.required || p.in === 'path' ? arb : fc.option(arb, { nil: undefined, freq: 2 });
    };
    const pick = (where: string) =>
      fc.record(
        Object.fromEntries(op.parameters.filter((p) => p.in === where).map((p) => [p.name, param(p)])),
      );
    return fc
      .record({
        path: pick('path'),
        query: pick('query'),
        headers: pick('header'),
        body: op.body
          ? this.value(op.body, '')
          : op.bytes
            ? fc.uint8Array({ maxLength: 64 })
            : fc.constant(undefined),
      })
      .map(({ path, query, headers, body }) => ({
        method: op.method,
        template: op.template,
        path: op.template.replace(/\{(\w+)\}/g, (_, name: string) =>
          encodeURIComponent(path[name] as string),
        ),
        query: defined(query),
        headers: defined(headers),
        body,
      }));
  }

  /** A valid request with one thing broken: a parameter, a header, the body's shape or its JSON. */
  invalid(op: Operation): fc.Arbitrary<FuzzRequest> {
    const text = fc.string({ maxLength: 12 });
    return fc
      .tuple(this.valid(op), fc.nat(), text, fc.jsonValue({ maxDepth: 2 }))
      .chain(([req, n, s, json]) => {
        const mutations: (() => FuzzRequest)[] = [
          () => ({ ...req, query: { ...req.query, [pickOf(op.parameters, n)?.name ?? 'x']: s } }),
          () => ({
            ...req,
            headers: { ...req.headers, [n % 2 ? 'If-Match' : 'If-None-Match']: headerText(s) },
          }),
        ];
        // The last path segment, when it is a parameter (a literal one would be another path, e.g. .../ttl).
        if (op.template.endsWith('}'))
          mutations.push(() => ({
            ...req,
            // A dot segment (even as %2E) is normalised away by the URL: a space instead, as for an empty one.
            path: req.path.replace(/[^/]+$/, (s === '.' || s === '..' ? '' : encodeURIComponent(s)) || '%20'),
          }));
        const body = req.body;
        // fetch sends no body with GET (nor would most clients).
        if (op.method !== 'get')
          mutations.push(
            () => ({ ...req, body: json }),
            () => ({ ...req, body: s, raw: true }),
          );
        if (isObject(body)) {
          const keys = Object.keys(body);
          const key = keys[n % Math.max(1, keys.length)] ?? 'x';
          mutations.push(
            () => ({ ...req, body: { ...body, [key]: json } }),
            () => ({ ...req, body: { ...body, [`${s}_extra`]: json } }),
            () => ({ ...req, body: Object.fromEntries(Object.entries(body).filter(([k]) => k !== key)) }),
          );
        }
        return fc.constant((mutations[n % mutations.length] as () => FuzzRequest)());
      });
  }

  /** An arbitrary of the values `schema` accepts; `name` is the property or parameter it is for. */
  value(schema: Schema, name: string): fc.Arbitrary<unknown> {
    const ref = schema.$ref;
    if (ref?.endsWith('/Key')) return this.pooled(KEYS, this.value(this.resolve(schema), ''));
    if (ref && /\/(Body)?(FieldName|MemberName)$/.test(ref))
      return this.pooled(NAMES, this.value(this.resolve(schema), ''));
    const s = this.resolve(schema);
    if ('const' in s) return fc.constant(s.const);
    if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
    const choices = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
    if (choices) return fc.oneof(...choices.map((c) => this.value(c, name)));
    const type = Array.isArray(s.type) ? fc.constantFrom(...(s.type as string[])) : fc.constant(s.type);
    return type.chain((t) => this.typed(s, t as string | undefined, name));
  }

  private typed(s: Schema, type: string | undefined, name: string): fc.Arbitrary<unknown> {
    const min = s.minimum as number | undefined;
    const max = s.maximum as number | undefined;
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer': {
        if (WAITS.has(name)) return fc.constant(0);
        const lo = Math.max(min ?? -1000, -1000);
        const hi = Math.min(max ?? 1000, 1000);
        return fc.oneof(
          fc.integer({ min: lo, max: Math.max(lo, hi) }),
          fc.constantFrom(min ?? lo, max ?? hi),
        );
      }
      case 'number':
        return fc.oneof(
          fc.integer({ min: -1000, max: 1000 }),
          fc.double({ min: min ?? -1e6, max: max ?? 1e6, noNaN: true }),
        );
      case 'string': {
        const minLength = (s.minLength as number | undefined) ?? 0;
        const maxLength = Math.min((s.maxLength as number | undefined) ?? 16, minLength + 16);
        if (typeof s.pattern === 'string')
          return fc
            .stringMatching(new RegExp(s.pattern as string))
            .filter((v) => v.length >= minLength && v.length <= ((s.maxLength as number | undefined) ?? 1e9));
        return fc.string({ minLength, maxLength });
      }
      case 'array': {
        const item = this.value((s.items ?? {}) as Schema, name);
        const minLength = (s.minItems as number | undefined) ?? 0;
        const maxLength = Math.min((s.maxItems as number | undefined) ?? 4, minLength + 4);
        return s.uniqueItems
          ? fc.uniqueArray(item, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
          : fc.array(item, { minLength, maxLength });
      }
      default:
        return this.object(s);
    }
  }

  private object(s: Schema): fc.Arbitrary<unknown> {
    const properties = s.properties as Record<string, Schema> | undefined;
    if (!properties) {
      const keys = this.value((s.propertyNames ?? { type: 'string', minLength: 1 }) as Schema, '');
      const values = this.value((s.additionalProperties ?? {}) as Schema, '');
      return fc.dictionary(keys as fc.Arbitrary<string>, values, {
        minKeys: (s.minProperties as number | undefined) ?? 0,
        maxKeys: 4,
      });
    }
    const record = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, this.value(v, k)]));
    return fc.record(record, { requiredKeys: (s.required as string[] | undefined) ?? [] });
  }

  /** Mostly one of `pool` (data the fuzzer seeded), sometimes anything `other` makes; never a reserved segment. */
  private pooled(pool: string[], other: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
    return fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...pool) },
      {
        weight: 1,
        arbitrary: other.filter((v) => typeof v === 'string' && !RESERVED.has(v) && v.length <= 64),
      },
    );
  }

  private resolve(schema: Schema): Schema {
    let s = schema;
    while (s.$ref)
      s = s.$ref
        .slice(2)
        .split('/')
        .reduce((o: Json, k) => o[k] as Json, this.doc) as Schema;
    return s;
  }
}

const sendable = (v: string) =>
  /^([\x21-\x7e\x80-\xff]([\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?$/.test(v);
const headerText = (v: string) => (sendable(v.trim()) ? v.trim() : 'x');
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const pickOf = <T>(items: T[], n: number) => items[n % Math.max(1, items.length)];
const defined = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Record<string, string>;
