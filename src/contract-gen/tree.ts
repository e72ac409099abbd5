// Plain JSON-tree helpers for the contract generator: deep merge, template names, refs, generator-only keys.

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `over` merged into `base`: objects key by key (over's keys first win), anything else replaced by `over`. */
export function merge(base: unknown, over: unknown): unknown {
  if (!isObject(base) || !isObject(over)) return over === undefined ? base : over;
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = merge(base[k], v);
  return out;
}

/** Every `{{name}}` in every string (keys included) replaced by `names[name]`. */
export function fill<T>(value: T, names: Record<string, string>): T {
  const text = (s: string) =>
    s.replace(/\{\{(\w+)\}\}/g, (_, n: string) => {
      if (names[n] === undefined) throw new Error(`contract template: no value for {{${n}}}`);
      return names[n];
    });
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return text(v);
    if (Array.isArray(v)) return v.map(walk);
    if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [text(k), walk(x)]));
    return v;
  };
  return walk(value) as T;
}

export const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
export const refName = (value: unknown): string | undefined => {
  const r = isObject(value) ? value.$ref : undefined;
  return typeof r === 'string' ? r.split('/').pop() : undefined;
};

/** What a `#/components/...` ref (also one into a schema's properties) points to, followed until no ref is left. */
export function resolve(doc: Json, value: unknown): Json {
  let v = value;
  for (let hops = 0; isObject(v) && typeof v.$ref === 'string'; hops++) {
    if (hops > 20) throw new Error(`contract: ${v.$ref} refers in a circle`);
    const target = (v.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((node, part) => (isObject(node) ? node[part] : undefined), doc);
    if (target === undefined) throw new Error(`contract: ${v.$ref} is not defined`);
    v = target;
  }
  if (!isObject(v)) throw new Error('contract: expected an object');
  return v;
}

/** Keys that only the generator reads: dropped from the served document. */
const GENERATOR_KEYS = new Set(['x-batch', 'x-no-redis', 'x-family', 'x-no-idempotency']);

export function withoutGeneratorKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutGeneratorKeys);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !GENERATOR_KEYS.has(k))
      .map(([k, v]) => [k, withoutGeneratorKeys(v)]),
  );
}

/**
 * A response or request body written with `schema` (and `example` / `examples`) beside its description: every
 * body here is JSON, so fragments leave out `content: {application/json: ...}` and this puts it back.
 */
export function jsonBody(value: unknown): unknown {
  if (!isObject(value) || value.$ref !== undefined) return value;
  if (value.schema === undefined && value.example === undefined && value.examples === undefined) return value;
  const { schema, example, examples, content, ...rest } = value;
  const media: Json = { schema };
  if (example !== undefined) media.example = example;
  if (examples !== undefined) media.examples = examples;
  // Other media types (raw bytes) written out under `content` come first; JSON is the usual answer.
  return { ...rest, content: { ...(content as Json | undefined), 'application/json': media } };
}

const OPERATION_METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** An operation with its request body and responses in full (see jsonBody). */
export function withJsonBodies(op: unknown): unknown {
  if (!isObject(op)) return op;
  const out: Json = { ...op };
  if (out.requestBody !== undefined) out.requestBody = jsonBody(out.requestBody);
  if (isObject(out.responses))
    out.responses = Object.fromEntries(Object.entries(out.responses).map(([k, r]) => [k, jsonBody(r)]));
  return out;
}

/** A fragment's path items with every operation in full. */
export function withJsonPaths(paths: unknown): Json {
  const out: Json = {};
  for (const [p, item] of Object.entries(isObject(paths) ? paths : {})) {
    const copy: Json = { ...(item as Json) };
    for (const m of OPERATION_METHODS) if (copy[m] !== undefined) copy[m] = withJsonBodies(copy[m]);
    out[p] = copy;
  }
  return out;
}

/**
 * Every object schema of the API is closed: fragments write an object schema as its `properties` (and `required`,
 * `description`) alone, and this adds `type: object` and `additionalProperties: false` wherever `type` is not
 * given. Examples are left as they are.
 */
export function closedObjects(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(closedObjects);
  if (!isObject(value)) return value;
  const out: Json = {};
  const open = isObject(value.properties) && value.type === undefined && value.$ref === undefined;
  if (open) {
    out.type = 'object';
    out.additionalProperties = false;
  }
  for (const [k, v] of Object.entries(value))
    out[k] =
      k === 'example' || k === 'examples'
        ? v
        : k === 'properties' && isObject(v)
          ? mapValues(v)
          : closedObjects(v);
  return out;
}

const mapValues = (props: Json): Json =>
  Object.fromEntries(Object.entries(props).map(([k, v]) => [k, closedObjects(v)]));
