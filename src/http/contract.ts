// Loads openapi.yaml once and compiles one AJV request validator per operation; AJV errors become ApiErrors.
import { readFileSync } from 'node:fs';
import Ajv2020, { type AnySchemaObject, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import { parse as parseYaml } from 'yaml';
import { ApiError, type ErrorType } from '../errors';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type Permission = 'read' | 'write' | 'admin';

/** What a validated request carries into a handler. */
export interface RequestInput {
  params: Record<string, string>;
  headers: Record<string, string>;
  /** Query parameters: strings, or numbers where the contract declares an integer. */
  query: Record<string, string | number>;
  body: Record<string, unknown>;
}

export interface Operation {
  readonly id: string;
  readonly method: Method;
  readonly path: string;
  readonly permission: Permission;
  readonly hasBody: boolean;
  /** The body is raw bytes (application/octet-stream): read as a Buffer (http/bytes-body.ts). */
  readonly bytesBody: boolean;
  /** The request headers the contract names for it (If-Match, Last-Event-ID, ...), as written there. */
  readonly headers: readonly string[];
  /** Validates params, headers and body; returns them typed or throws a 400-family ApiError. */
  validate(input: { params: unknown; headers: unknown; query?: unknown; body: unknown }): RequestInput;
}

type Json = Record<string, unknown>;
interface OpenApiParameter {
  name: string;
  in: string;
  required?: boolean;
  schema: Json;
  $ref?: string;
}

const COMPONENTS_ID = 'components.json';
/** The rule behind an error type (`x-rule` of the schema that reports it), added to its messages. */
type Rules = Partial<Record<ErrorType, string>>;
const METHODS: Method[] = ['get', 'post', 'put', 'patch', 'delete'];

/** The contract: one compiled operation per path and method under /store. */
export class Contract {
  readonly operations: Operation[] = [];
  // verbose: the messages quote the rejected value and read `x-error` from the failing schema; release() below
  // drops those errors (and the request data they hold) once the message is built.
  private readonly ajv = new Ajv2020({ discriminator: true, strict: true, verbose: true, allErrors: false });
  private readonly validateFunctions = new Set<ValidateFunction>();
  private readonly rules: Rules;

  /**
   * `batchMaxOperations` (SVC_BATCH_MAX_OPERATIONS) replaces the documented default of the batch bodies. The parsed
   * document is not kept: the validators hold AJV's copy of the schemas and the docs pages read the file (~5 MB
   * less live heap; docs/performance.md, "RSS").
   */
  constructor(file: string, options: { batchMaxOperations?: number } = {}) {
    const doc = JSON.parse(
      JSON.stringify(parseYaml(readFileSync(file, 'utf8'))).replaceAll(
        '"#/components/schemas/',
        `"${COMPONENTS_ID}#/$defs/`,
      ),
    );
    if (options.batchMaxOperations) setBatchLimit(doc, options.batchMaxOperations);
    for (const schema of Object.values(doc.components.schemas as Record<string, Json>))
      checkTagFromMapping(schema);
    this.rules = rulesOf(doc.components.schemas as Record<string, Json>);
    for (const keyword of vendorKeywords(doc)) this.ajv.addKeyword(keyword);
    this.ajv.addKeyword('example');
    this.ajv.addSchema({ $id: COMPONENTS_ID, $defs: doc.components.schemas });
    for (const [path, ref] of Object.entries(doc.paths as Record<string, Json>)) {
      const item = deref<Json>(doc, ref);
      // The API lives under /store; a page outside it (GET /) takes no input and needs no credentials.
      if (!path.startsWith('/store/')) continue;
      for (const method of METHODS) {
        const op = item[method] as Json | undefined;
        if (op)
          this.operations.push(
            this.compile(doc, path, method, op, (item.parameters as OpenApiParameter[]) ?? []),
          );
      }
    }
  }

  operation(method: Method, path: string): Operation {
    const op = this.operations.find((o) => o.method === method && o.path === path);
    if (!op) throw new Error(`${method.toUpperCase()} ${path} is not in openapi.yaml`);
    return op;
  }

  private compile(doc: Json, path: string, method: Method, op: Json, shared: OpenApiParameter[]): Operation {
    const parameters = [...shared, ...((op.parameters as OpenApiParameter[]) ?? [])].map((p) =>
      deref<OpenApiParameter>(doc, p),
    );
    const group = (where: string, lower: boolean) => {
      const ps = parameters.filter((p) => p.in === where);
      const name = (p: OpenApiParameter) => (lower ? p.name.toLowerCase() : p.name);
      return {
        type: 'object',
        properties: Object.fromEntries(ps.map((p) => [name(p), p.schema])),
        required: ps.filter((p) => p.required).map(name),
      };
    };
    const requestBody = op.requestBody ? deref<Json>(doc, op.requestBody) : undefined;
    const bodySchema = (requestBody?.content as Record<string, Json> | undefined)?.['application/json']
      ?.schema;
    const schema = {
      type: 'object',
      properties: {
        params: group('path', false),
        headers: group('header', true),
        query: group('query', false),
        ...(bodySchema ? { body: bodySchema } : {}),
      },
      // A body of raw bytes (application/octet-stream) has no schema: its reader (bytes-body.ts) checks it.
      required: requestBody?.required && bodySchema ? ['params', 'body'] : ['params'],
    };
    // A query string carries text only: integer parameters are converted before validation (never coerceTypes,
    // which would also turn a JSON body's "10" into 10).
    const integers = parameters
      .filter((p) => p.in === 'query' && p.schema.type === 'integer')
      .map((p) => p.name);
    const validateFn = this.ajv.compile(schema);
    const held = this.track(validateFn);
    // A write must not ignore a precondition it does not implement (RFC 9110 §13.2.1): a 400 rather than an
    // unconditional write the client believed conditional.
    const refused =
      method === 'get'
        ? []
        : CONDITIONS.filter((h) => !parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === h));
    const { ajv, rules } = this;
    return {
      id: op.operationId as string,
      method,
      path,
      permission: (op['x-permission'] as Permission) ?? 'admin',
      hasBody: Boolean(bodySchema),
      bytesBody: Boolean((requestBody?.content as Json | undefined)?.['application/octet-stream']),
      headers: parameters.filter((p) => p.in === 'header').map((p) => p.name),
      validate(input) {
        for (const header of refused) {
          if ((input.headers as Record<string, unknown>)[header] !== undefined)
            throw new ApiError('invalid_request', `${method.toUpperCase()} ${path} does not take ${header}`);
        }
        input.query = toIntegers(input.query ?? {}, integers);
        try {
          if (!validateFn(input))
            throw validationError((validateFn.errors as ErrorObject[])[0] as ErrorObject, ajv, rules);
          return input as RequestInput;
        } finally {
          release(held);
        }
      },
    };
  }

  /** Validates a value against one component schema, e.g. a batch item; errors as for requests. */
  validator(name: string): (value: unknown) => void {
    const fn = this.ajv.getSchema(`${COMPONENTS_ID}#/$defs/${name}`) as ValidateFunction;
    if (!fn) throw new Error(`schema ${name} is not in openapi.yaml`);
    const held = this.track(fn);
    return (value) => {
      try {
        if (!fn(value))
          throw validationError((fn.errors as ErrorObject[])[0] as ErrorObject, this.ajv, this.rules);
      } finally {
        release(held);
      }
    };
  }

  /** How many validate functions still hold errors (the data of a rejected request); 0 between requests. */
  retainedErrors(): number {
    return [...this.validateFunctions].filter((fn) => fn.errors).length;
  }

  private track(fn: ValidateFunction): ValidateFunction[] {
    const fns = reachable(fn);
    for (const f of fns) this.validateFunctions.add(f);
    return fns;
  }
}

/**
 * A path item, parameter or request body, or the component its `$ref` names (`#/components/<kind>/<name>`): the
 * document writes shared parts once. Schemas are left to AJV, which resolves their refs itself.
 */
export function deref<T>(doc: Json, value: unknown): T {
  const ref = (value as { $ref?: unknown }).$ref;
  if (typeof ref !== 'string') return value as T;
  const [, , kind, name] = ref.split('/');
  const components = doc.components as Record<string, Record<string, unknown> | undefined>;
  const target = components[kind as string]?.[name as string];
  if (!target) throw new Error(`openapi.yaml: ${ref} is not defined`);
  return deref<T>(doc, target);
}

/** The part of an AJV SchemaEnv that links a compiled schema to the ones it references. */
interface SchemaEnvLinks {
  validate?: ValidateFunction;
  refs?: Record<string, unknown>;
  root?: SchemaEnvLinks;
}

/**
 * `fn` and every validate function it may call through a $ref: each one keeps its last `errors` (with `verbose`,
 * the whole rejected value), also a oneOf branch that failed inside a request that passed.
 */
function reachable(fn: ValidateFunction): ValidateFunction[] {
  const seen = new Set<SchemaEnvLinks>();
  const fns = new Set<ValidateFunction>([fn]);
  const walk = (env: SchemaEnvLinks | undefined) => {
    if (!env || typeof env !== 'object' || seen.has(env)) return;
    seen.add(env);
    if (env.validate) fns.add(env.validate);
    for (const ref of Object.values(env.refs ?? {})) walk(ref as SchemaEnvLinks);
    walk(env.root);
  };
  walk(fn.schemaEnv as unknown as SchemaEnvLinks);
  return [...fns];
}

/** Drops what the validators kept of the last input, so that no request's data outlives its answer. */
function release(fns: ValidateFunction[]): void {
  for (const fn of fns) fn.errors = null;
}

function setBatchLimit(doc: Json, max: number): void {
  const schemas = (doc.components as { schemas: Record<string, { properties?: { operations?: Json } }> })
    .schemas;
  for (const [name, schema] of Object.entries(schemas)) {
    if (name.endsWith('BatchRequest') && schema.properties?.operations)
      schema.properties.operations.maxItems = max;
  }
}

/**
 * The document lists a batch's item types once, as the keys of its `discriminator.mapping`. AJV derives the mapping
 * from the `oneOf` itself and refuses one written out, so it is dropped here and becomes the check of the tag
 * (`type` must be a string among those keys), which runs before the discriminator and names what is allowed.
 */
function checkTagFromMapping(schema: Json): void {
  const discriminator = schema.discriminator as
    | { propertyName: string; mapping?: Record<string, string> }
    | undefined;
  if (!discriminator?.mapping) return;
  const tags = Object.keys(discriminator.mapping);
  schema.properties = {
    ...(schema.properties as Json | undefined),
    [discriminator.propertyName]: { type: 'string', enum: tags },
  };
  delete discriminator.mapping;
}

/** Each error type's rule, written once in the contract as the `x-rule` of the schema whose `x-error` it is. */
function rulesOf(schemas: Record<string, Json>): Rules {
  const rules: Rules = {};
  for (const schema of Object.values(schemas))
    if (typeof schema['x-rule'] === 'string') rules[schema['x-error'] as ErrorType] = schema['x-rule'];
  return rules;
}

function vendorKeywords(value: unknown, found = new Set<string>()): Set<string> {
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.startsWith('x-')) found.add(k);
      vendorKeywords(v, found);
    }
  }
  return found;
}

/** The error type a failed schema names with `x-error`; for a missing property, that property's schema's. */
function errorTypeOf(e: ErrorObject, ajv: Ajv2020): ErrorType {
  let schema: AnySchemaObject | undefined = e.parentSchema;
  if (e.keyword === 'required') {
    schema = (schema?.properties as Record<string, AnySchemaObject> | undefined)?.[
      e.params.missingProperty as string
    ];
    if (typeof schema?.$ref === 'string') schema = ajv.getSchema(schema.$ref)?.schema as AnySchemaObject;
  }
  return (schema?.['x-error'] as ErrorType | undefined) ?? 'invalid_request';
}

/** '/body/operations/3/key' -> where: 'operations[3].key', index 3. '/params/key' -> 'key'. */
function describe(path: string): { where: string; index?: number } {
  const parts = path.split('/').slice(2);
  const opIndex = parts[0] === 'operations' && parts[1] !== undefined ? Number(parts[1]) : undefined;
  const where = parts.map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : `${i ? '.' : ''}${p}`)).join('');
  return { where, index: opIndex };
}

/** The conditional request headers a write either implements (declared in its parameters) or refuses. */
const CONDITIONS = ['if-match', 'if-none-match'] as const;

function validationError(e: ErrorObject, ajv: Ajv2020, rules: Rules): ApiError {
  const type = errorTypeOf(e, ajv);
  const { where, index } = describe(e.instancePath);
  const section = e.instancePath.split('/')[1] ?? '';
  // Inside a batch item the index leads the message, and the field is named from the item on.
  const at = index === undefined ? '' : `operations[${index}]: `;
  const field = index === undefined ? where : where.replace(/^operations\[\d+\]\.?/, '');
  const subject = `${section === 'headers' ? 'header ' : ''}${field || (section === 'body' ? 'body' : 'request')}`;
  let problem: string;
  if (e.keyword === 'required' && e.instancePath === '') problem = 'Request body is required';
  else if (e.keyword === 'required')
    problem = `${field ? `${field}: ` : ''}'${e.params.missingProperty}' is required`;
  else if (e.keyword === 'additionalProperties')
    problem = `${field ? `${field}: ` : ''}unknown property '${e.params.additionalProperty}'`;
  else if (e.keyword === 'discriminator') {
    const allowed = ((e.parentSchema?.oneOf ?? []) as AnySchemaObject[])
      .map((s) => (s.$ref ? ajv.getSchema(s.$ref)?.schema : s) as AnySchemaObject)
      .map((s) => s?.properties?.type?.const);
    problem = `'type' must be one of ${allowed.join(', ')}`;
  } else if (e.keyword === 'enum') problem = `${subject} must be one of ${e.params.allowedValues.join(', ')}`;
  else if (e.keyword === 'const') problem = `${subject} must be '${e.params.allowedValue}'`;
  else if (e.propertyName !== undefined)
    problem = `${subject} has a name '${e.propertyName.slice(0, 100)}' that ${e.message}`;
  else if (type === 'invalid_key' && typeof e.data === 'string')
    problem = `${subject} '${e.data.slice(0, 100)}' is not a valid key: ${rules.invalid_key}`;
  else problem = `${subject} ${e.message}`;
  if (type !== 'invalid_key' && rules[type]) problem = `${problem} (${rules[type]})`;
  return new ApiError(type, at + problem, {
    details: {
      ...(index === undefined ? {} : { index }),
      path: e.instancePath,
      keyword: e.keyword,
      params: e.params,
    },
  });
}

/** A copy of `query` whose `names` hold numbers where their text is a whole number (else left for AJV to refuse). */
function toIntegers(query: unknown, names: string[]): unknown {
  if (names.length === 0 || typeof query !== 'object' || query === null) return query;
  const copy: Record<string, unknown> = { ...query };
  for (const name of names) {
    const value = copy[name];
    if (typeof value !== 'string' || !/^-?\d{1,400}$/.test(value)) continue;
    // Every safe integer converts exactly; a larger one converts too, so that the schema's minimum or maximum
    // names the problem rather than `must be integer` (2^53 + 1 becomes 2^53, still over the maximum).
    const number = Number(value);
    if (Number.isSafeInteger(number) || Math.abs(number) > Number.MAX_SAFE_INTEGER) copy[name] = number;
  }
  return copy;
}
