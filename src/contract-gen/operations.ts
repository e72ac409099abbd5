// What every operation of the contract gets without a person writing it: tags, permission, the responses and
// headers that follow from its shape (401/403/429/500/503, 304, 400 on a bad key, 409 wrong type, 412, 413/415).

import { ERROR_STATUS } from '../errors';
import type { Permission } from '../http/contract';
import { isObject, type Json, ref, refName, resolve } from './tree';

/** What the generator knows of an operation besides its fragment. */
export interface OperationFacts {
  readonly path: string;
  readonly method: string;
  readonly tag: string;
  /** Under /store: authenticated, rate limited, counted. */
  readonly store: boolean;
  readonly permission?: Permission;
  /** The 403 to document when not the permission's own (a batch's, set algebra's). */
  readonly forbidden?: string;
  /** The family's schema prefix (`String`), for its `<Title>WrongType` 409 on a key path. */
  readonly title?: string;
  /** The family's whole-key read (GET /{key}): it answers the key's ETag, and 304 to If-None-Match. */
  readonly wholeRead?: boolean;
  /** A family's batch: its 400 comes from its generated schemas, later (generate.ts, batchBadRequest). */
  readonly batch?: boolean;
  /** Its answer holds stored values (ops/encoding.ts): one that is not text needs `encoding: base64` (422). */
  readonly answersValues?: boolean;
}

const FORBIDDEN: Record<Permission, string> = {
  read: 'ForbiddenRead',
  write: 'ForbiddenWrite',
  admin: 'ForbiddenAdmin',
};

/** The headers every answer under /store carries: the request id and the rate limit's. */
export const STANDARD_HEADERS: Json = {
  'X-Request-ID': ref('headers', 'RequestId'),
  'RateLimit-Limit': ref('headers', 'RateLimitLimit'),
  'RateLimit-Remaining': ref('headers', 'RateLimitRemaining'),
  'RateLimit-Reset': ref('headers', 'RateLimitReset'),
};

const paramNames = (op: Json) => ((op.parameters as unknown[]) ?? []).map(refName);

/** A success response written out (not a ref) gets the standard headers first, unless it lists its own. */
export function withStandardHeaders(response: Json): Json {
  const headers = (response.headers as Json | undefined) ?? {};
  if (!response.content || headers['X-Request-ID']) return response;
  const { description, headers: _, ...rest } = response;
  return { description, headers: { ...STANDARD_HEADERS, ...headers }, ...rest };
}

/** The error types a schema reports (its `x-error`s, through refs and nested schemas). */
function schemaErrors(doc: Json, schema: unknown, found: Set<string>, seen = new Set<unknown>()): void {
  if (!isObject(schema) || seen.has(schema)) return;
  seen.add(schema);
  const s = typeof schema.$ref === 'string' ? resolve(doc, schema) : schema;
  if (typeof s['x-error'] === 'string') found.add(s['x-error']);
  for (const [k, v] of Object.entries(s)) {
    if (k === 'properties' && isObject(v))
      for (const p of Object.values(v)) schemaErrors(doc, p, found, seen);
    else if (['items', 'additionalProperties', 'propertyNames'].includes(k))
      schemaErrors(doc, v, found, seen);
    else if (['oneOf', 'anyOf', 'allOf'].includes(k) && Array.isArray(v))
      for (const x of v) schemaErrors(doc, x, found, seen);
  }
}

/**
 * The 400 of an operation that takes more than a key: the error types its parameters' and body's schemas report
 * (`x-error`), `invalid_request` for anything else they refuse (an unknown property, a header value), and
 * `invalid_value` for a body that is not well-formed JSON.
 */
export function badRequest(
  doc: Json,
  op: Json,
  pathParams: Json[],
  lead = 'The request is invalid; nothing was changed.',
): Json | undefined {
  const params = [...pathParams, ...((op.parameters as Json[]) ?? [])].map((p) => resolve(doc, p));
  // A key and conditional headers only: the key's 400 (InvalidKey).
  if (!op.requestBody && params.every((p) => p.in === 'header' || (p.in === 'path' && p.name === 'key')))
    return undefined;
  const found = new Set<string>();
  for (const p of params) schemaErrors(doc, p.schema, found);
  if (op.requestBody) {
    const media = (resolve(doc, op.requestBody).content as Json)['application/json'] as Json | undefined;
    schemaErrors(doc, media?.schema, found);
    found.add('invalid_value');
  }
  if (op.requestBody || params.some((p) => p.in === 'query')) found.add('invalid_request');
  const types = Object.keys(ERROR_STATUS).filter((t) => found.has(t));
  const list = types.map((t) => `\`${t}\``).join(', ');
  return {
    ...ref('responses', 'BadRequest'),
    description: `${lead} \`error\`: ${list}.`,
  };
}

/** Whether an operation's JSON body (a ref or inline) has an `encoding` property of its own. */
function bodyTakesEncoding(doc: Json | undefined, body: unknown): boolean {
  if (!doc || body === undefined) return false;
  const content = resolve(doc, body).content as Json | undefined;
  const media = content?.['application/json'] as Json | undefined;
  if (!media?.schema) return false;
  const properties = resolve(doc, media.schema).properties;
  return isObject(properties) && 'encoding' in properties;
}

/** `op` with everything its facts imply; what the fragment says wins. */
export function completeOperation(
  op: Json,
  facts: OperationFacts,
  doc?: Json,
  pathParams: Json[] = [],
): Json {
  const out: Json = { ...op };
  if (!out.tags) out.tags = [facts.tag];
  if (facts.permission && !out['x-permission']) out['x-permission'] = facts.permission;
  const responses: Json = { ...((out.responses as Json) ?? {}) };
  if (facts.store) {
    const key = facts.path.includes('{key}');
    // A write to a key checks If-Match, a whole-key read answers If-None-Match (families/family.ts, routeEtag).
    const conditional = (name: string, when: boolean | undefined) => {
      if (when && !paramNames(out).includes(name))
        out.parameters = [...((out.parameters as Json[]) ?? []), ref('parameters', name)];
    };
    conditional('IfMatch', key && facts.permission === 'write');
    conditional('IfNoneMatchRead', facts.wholeRead);
    // Parameters every operation of a kind takes, first, when the contract declares them: an Idempotency-Key on
    // every write, the value encoding on every read of a family.
    const leading = (name: string, when: boolean | undefined) => {
      const declared =
        doc &&
        isObject((doc.components as Json | undefined)?.parameters) &&
        name in ((doc.components as Json).parameters as Json);
      if (when && declared && !paramNames(out).includes(name))
        out.parameters = [ref('parameters', name), ...((out.parameters as Json[]) ?? [])];
    };
    // `x-no-idempotency`: a write that takes no Idempotency-Key (a lock's acquire: a replayed grant would hand one
    // owner token to two callers).
    const idempotent = facts.permission === 'write' && !out['x-no-idempotency'];
    leading('IdempotencyKey', idempotent);
    // Also where the path names a field or member (base64 too under ?encoding=base64) and no body says it.
    const named = /\{(field|member)\}/.test(facts.path) && !bodyTakesEncoding(doc, out.requestBody);
    leading('Encoding', facts.title !== undefined && (facts.method === 'get' || named));
    const params = paramNames(out);
    const etag = params.includes('IfMatch') || params.includes('IfNoneMatchRead');
    for (const [status, r] of Object.entries(responses)) {
      if (!/^2/.test(status) || !isObject(r) || r.$ref) continue;
      const headers = (r.headers as Json | undefined) ?? {};
      const withEtag =
        etag && r.content && !headers.ETag
          ? { ...r, headers: { ...headers, ETag: ref('headers', 'ETag') } }
          : r;
      responses[status] = withStandardHeaders(withEtag);
    }
    // A create-only write (If-None-Match: *) refuses what exists; the type names what (key, field, member).
    if (params.includes('IfNoneMatch') && responses['409'] === undefined) {
      const exists = facts.path.endsWith('{field}')
        ? 'field_exists'
        : facts.path.endsWith('{member}')
          ? 'duplicate_member'
          : 'key_exists';
      responses['409'] = {
        ...ref('responses', 'Conflict'),
        description: `Nothing was changed. \`error\`: \`wrong_type\` or \`${exists}\`.`,
      };
    }
    const add = (status: string, name: string | false | undefined) => {
      if (name && responses[status] === undefined) responses[status] = ref('responses', name);
    };
    add('304', params.includes('IfNoneMatchRead') && 'NotModified');
    const bad =
      doc && !facts.batch && responses['400'] === undefined ? badRequest(doc, out, pathParams) : undefined;
    if (bad) responses['400'] = bad;
    add('400', key && 'InvalidKey');
    add('401', 'Unauthorized');
    add('403', facts.forbidden ?? (facts.permission && FORBIDDEN[facts.permission]));
    add('409', key && facts.title && `${facts.title}WrongType`);
    // Once the contract declares them: a write may meet its Idempotency-Key in use (409) or used for another
    // request (422); a read of values may find one that is not text (422).
    const declared = (name: string) =>
      doc &&
      isObject((doc.components as Json | undefined)?.responses) &&
      name in ((doc.components as Json).responses as Json);
    add('409', idempotent && declared('IdempotencyKeyInUse') && 'IdempotencyKeyInUse');
    add('412', params.includes('IfMatch') && 'PreconditionFailed');
    add('413', out.requestBody !== undefined && 'PayloadTooLarge');
    // A form content type is refused on every write, with a body or without (http/form-bodies.ts).
    add('415', (out.requestBody !== undefined || facts.method !== 'get') && 'UnsupportedMediaType');
    add('422', (idempotent || facts.answersValues) && declared('Unprocessable') && 'Unprocessable');
    add('429', 'TooManyRequests');
    add('500', 'ServerError');
    add('501', !out['x-no-redis'] && 'CommandRefused');
    add('503', !out['x-no-redis'] && 'ServiceUnavailable');
  }
  out.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
  return inOrder(out);
}

/** The order a person reads an operation in: what it is, who may call it, what it takes, what it answers. */
const OPERATION_KEYS = [
  'operationId',
  'tags',
  'summary',
  'description',
  'x-permission',
  'security',
  'parameters',
  'requestBody',
  'responses',
];

function inOrder(op: Json): Json {
  const known = OPERATION_KEYS.filter((k) => op[k] !== undefined).map((k) => [k, op[k]]);
  const rest = Object.entries(op).filter(([k]) => !OPERATION_KEYS.includes(k));
  return Object.fromEntries([...known, ...rest]);
}

/** Where a path template's `{name}` is declared: its parameter component (a family may name its own). */
export function pathParameters(path: string, names: Record<string, string> = {}): Json[] {
  const defaults: Record<string, string> = {
    key: 'Key',
    field: 'Field',
    member: 'Member',
    index: 'ListIndex',
  };
  return [...path.matchAll(/\{(\w+)\}/g)].map(([, n]) => {
    const name = names[n as string] ?? defaults[n as string];
    if (!name) throw new Error(`contract: no parameter component for {${n}} in ${path}`);
    return ref('parameters', name);
  });
}
