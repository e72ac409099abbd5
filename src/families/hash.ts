// The hash family: /store/hash/..., Redis hashes.
import type { RequestInput } from '../http/contract';
import type { IncrInput } from '../ops/counters';
import { type HashSetInput, hashOps } from '../ops/hashes';
import { defineFamily, type Family } from './family';
import { bodyKey, ifAbsent, ifPresent, KEY_BATCH, KEY_ROUTES, pageKey, pathKey } from './keys';

const pathField = (input: RequestInput) => ({ ...pathKey(input), field: input.params.field as string });

// Annotated, so that the type unions derived from the list of families never wait on the ops' inferred types.
export const hashes: Family<'hash', 'hash', 'HLEN'> = defineFamily({
  name: 'hash',
  redisType: 'hash',
  sizeCommand: 'HLEN',
  sample: ['HSET', 'f', 'v'],
  ops: hashOps,
  batch: {
    set: 'set',
    get: 'get',
    setField: 'setField',
    getField: 'getField',
    deleteField: 'deleteField',
    incr: 'incrField',
    keys: 'keys',
    values: 'values',
    ...KEY_BATCH,
  },
  routes: [
    { method: 'get', path: '/{key}', op: 'get', input: pageKey },
    {
      method: 'post',
      path: '/{key}',
      op: 'set',
      input: (i) => ({ ...bodyKey<HashSetInput>(i), ifAbsent: ifAbsent(i) }),
    },
    { method: 'get', path: '/{key}/field/{field}', op: 'getField', input: pathField },
    {
      method: 'post',
      path: '/{key}/field/{field}',
      op: 'setField',
      input: (i) => ({
        ...pathField(i),
        value: i.body.value as string,
        ttl: i.body.ttl as number | undefined,
        ifAbsent: ifAbsent(i),
      }),
    },
    {
      method: 'delete',
      path: '/{key}/field/{field}',
      op: 'deleteField',
      input: (i) => ({ ...pathField(i), ifPresent: ifPresent(i) }),
      ownIfMatchStar: true,
    },
    {
      method: 'post',
      path: '/{key}/field/{field}/incr',
      op: 'incrField',
      input: (i) => ({ ...(i.body as Omit<IncrInput, 'key'>), ...pathField(i) }),
    },
    { method: 'get', path: '/{key}/keys', op: 'keys', input: pageKey },
    { method: 'get', path: '/{key}/values', op: 'values', input: pageKey },
    { method: 'get', path: '/{key}/exists', op: 'exists', input: pathKey },
    ...KEY_ROUTES,
  ],
});
