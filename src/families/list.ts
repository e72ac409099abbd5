// The list family: /store/list/..., Redis lists: push and pop at either end (a pop may wait), ranges, indexes.
import type { RequestInput } from '../http/contract';
import type { PopInput, PushInput, RemoveInput, TrimInput } from '../ops/lists';
import { listOps } from '../ops/lists';
import { defineFamily, type Family } from './family';
import { bodyKey, ifAbsent, KEY_BATCH, KEY_ROUTES, pathKey } from './keys';

/** The index as Redis reads it: a decimal without leading zeros (Redis refuses `007`, which the contract allows). */
const pathIndex = (input: RequestInput) => ({
  ...pathKey(input),
  index: BigInt(input.params.index as string).toString(),
});

// Annotated, so that the type unions derived from the list of families never wait on the ops' inferred types.
export const lists: Family<'list', 'list', 'LLEN'> = defineFamily({
  name: 'list',
  redisType: 'list',
  sizeCommand: 'LLEN',
  sample: ['RPUSH', 'a', 'b'],
  ops: listOps,
  batch: {
    push: 'push',
    pop: 'pop',
    range: 'range',
    length: 'length',
    index: 'index',
    setIndex: 'setIndex',
    trim: 'trim',
    remove: 'remove',
    ...KEY_BATCH,
  },
  routes: [
    {
      method: 'get',
      path: '/{key}',
      op: 'range',
      input: (i) => ({ ...pathKey(i), start: i.query.start as number, stop: i.query.stop as number }),
    },
    {
      method: 'post',
      path: '/{key}/push',
      op: 'push',
      input: (i) => ({ ...bodyKey<PushInput>(i), ifAbsent: ifAbsent(i) }),
    },
    { method: 'post', path: '/{key}/pop', op: 'pop', input: (i) => bodyKey<PopInput>(i) },
    { method: 'get', path: '/{key}/length', op: 'length', input: pathKey },
    { method: 'get', path: '/{key}/index/{index}', op: 'index', input: pathIndex },
    {
      method: 'post',
      path: '/{key}/index/{index}',
      op: 'setIndex',
      input: (i) => ({ ...pathIndex(i), value: i.body.value as string }),
    },
    { method: 'post', path: '/{key}/trim', op: 'trim', input: (i) => bodyKey<TrimInput>(i) },
    { method: 'post', path: '/{key}/remove', op: 'remove', input: (i) => bodyKey<RemoveInput>(i) },
    { method: 'get', path: '/{key}/exists', op: 'exists', input: pathKey },
    ...KEY_ROUTES,
  ],
});
