// The string family: /store/string/..., Redis strings.
import type { IncrInput } from '../ops/counters';
import { fromBytes } from '../ops/encoding';
import type { StringSetInput } from '../ops/strings';
import { stringOps } from '../ops/strings';
import { defineFamily, type Family } from './family';
import { bodyKey, ifAbsent, KEY_BATCH, KEY_ROUTES, pathKey } from './keys';

// Annotated, so that the type unions derived from the list of families never wait on the ops' inferred types.
export const strings: Family<'string', 'string', 'STRLEN'> = defineFamily({
  name: 'string',
  redisType: 'string',
  sizeCommand: 'STRLEN',
  sample: ['SET', 'v'],
  ops: stringOps,
  batch: { set: 'set', get: 'get', incr: 'incr', ...KEY_BATCH },
  routes: [
    { method: 'get', path: '/{key}', op: 'get', input: pathKey, bytesOut: 'value' },
    {
      method: 'post',
      path: '/{key}',
      op: 'set',
      input: (i) => ({ ...bodyKey<StringSetInput>(i), ifAbsent: ifAbsent(i) }),
    },
    // The body's bytes as the value (application/octet-stream); the TTL in the query.
    {
      method: 'put',
      path: '/{key}',
      op: 'set',
      input: (i) => ({
        ...pathKey(i),
        value: fromBytes(i.body as unknown as Buffer),
        ttl: i.query.ttl as number | undefined,
        ifAbsent: ifAbsent(i),
      }),
      bytesIn: true,
    },
    {
      method: 'post',
      path: '/{key}/incr',
      op: 'incr',
      input: (i) => bodyKey<IncrInput>(i),
    },
    { method: 'get', path: '/{key}/exists', op: 'exists', input: pathKey },
    ...KEY_ROUTES,
  ],
});
