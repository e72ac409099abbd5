// The set family: /store/set/..., Redis sets, with set algebra over several keys.
import type { RequestInput } from '../http/contract';
import { type AlgebraInput, type SetAddInput, setOps } from '../ops/sets';
import { defineFamily, type Family } from './family';
import { bodyKey, ifAbsent, ifPresent, KEY_BATCH, KEY_ROUTES, pageKey, pathKey } from './keys';

const pathMember = (input: RequestInput) => ({ ...pathKey(input), member: input.params.member as string });
const algebraKeys = (input: RequestInput) => input.body as unknown as AlgebraInput;

// Annotated, so that the type unions derived from the list of families never wait on the ops' inferred types.
export const sets: Family<'set', 'set', 'SCARD'> = defineFamily({
  name: 'set',
  redisType: 'set',
  sizeCommand: 'SCARD',
  sample: ['SADD', 'm', 'n'],
  ops: setOps,
  batch: {
    add: 'add',
    get: 'get',
    addMember: 'addMember',
    removeMember: 'removeMember',
    isMember: 'isMember',
    cardinality: 'cardinality',
    pop: 'pop',
    ...KEY_BATCH,
  },
  routes: [
    // Before POST /store/set/{key}: `union`, `intersection`, `difference` are reserved segments.
    { method: 'post', path: '/union', op: 'union', input: algebraKeys },
    { method: 'post', path: '/intersection', op: 'intersection', input: algebraKeys },
    { method: 'post', path: '/difference', op: 'difference', input: algebraKeys },
    { method: 'get', path: '/{key}', op: 'get', input: pageKey },
    {
      method: 'post',
      path: '/{key}',
      op: 'add',
      input: (i) => ({ ...bodyKey<SetAddInput>(i), ifAbsent: ifAbsent(i) }),
    },
    {
      method: 'post',
      path: '/{key}/member/{member}',
      op: 'addMember',
      input: (i) => ({ ...pathMember(i), ifAbsent: ifAbsent(i) }),
    },
    {
      method: 'delete',
      path: '/{key}/member/{member}',
      op: 'removeMember',
      input: (i) => ({ ...pathMember(i), ifPresent: ifPresent(i) }),
      ownIfMatchStar: true,
    },
    { method: 'get', path: '/{key}/member/{member}/exists', op: 'isMember', input: pathMember },
    { method: 'get', path: '/{key}/cardinality', op: 'cardinality', input: pathKey },
    { method: 'post', path: '/{key}/pop', op: 'pop', input: pathKey },
    ...KEY_ROUTES,
  ],
});
