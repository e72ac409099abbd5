// What every operation of the contract gets without a person writing it: tags, permission, the responses and
// headers that follow from its shape (401/403/429/500/503, 304, 400 on a bad key, 409 wrong type, 412, 413/415).
import type { Permission } from '../http/contract';
import { isObject, type Json, ref, refName } from './tree';

/** What the generator knows of an operation besides its fragment. */
export interface OperationFacts {
  readonly path: string;
  readonly tag: string;
  /** Under /store: authenticated, rate limited, counted. */
  readonly store: boolean;
  readonly permission?: Permission;
  /** The 403 to document when not the permission's own (a batch's, set algebra's). */
  readonly forbidden?: string;
  /** The family's schema prefix (`String`), for its `<Title>WrongType` 409 on a key path. */
  readonly title?: string;
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

/** `op` with everything its facts imply; what the fragment says wins. */
export function completeOperation(op: Json, facts: OperationFacts): Json {
  const out: Json = { ...op };
  if (!out.tags) out.tags = [facts.tag];
  if (facts.permission && !out['x-permission']) out['x-permission'] = facts.permission;
  const responses: Json = { ...((out.responses as Json) ?? {}) };
  if (facts.store) {
    for (const [status, r] of Object.entries(responses))
      if (/^2/.test(status) && isObject(r) && !r.$ref) responses[status] = withStandardHeaders(r);
    const params = paramNames(out);
    const key = facts.path.includes('{key}');
    const add = (status: string, name: string | false | undefined) => {
      if (name && responses[status] === undefined) responses[status] = ref('responses', name);
    };
    add('304', params.includes('IfNoneMatchRead') && 'NotModified');
    add('400', key && 'InvalidKey');
    add('401', 'Unauthorized');
    add('403', facts.forbidden ?? (facts.permission && FORBIDDEN[facts.permission]));
    add('409', key && facts.title && `${facts.title}WrongType`);
    add('412', params.includes('IfMatch') && 'PreconditionFailed');
    add('413', out.requestBody !== undefined && 'PayloadTooLarge');
    add('415', out.requestBody !== undefined && 'UnsupportedMediaType');
    add('429', 'TooManyRequests');
    add('500', 'ServerError');
    add('503', !out['x-no-redis'] && 'ServiceUnavailable');
  }
  out.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
  return out;
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
