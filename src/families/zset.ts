// The sorted set family: /store/zset/..., Redis sorted sets (a leaderboard: scores, ranks, score ranges).
import type { RequestInput } from '../http/contract';
import { type ZsetAddInput, zsetOps } from '../ops/zsets';
import { defineFamily, type Family } from './family';
import { bodyKey, ifAbsent, ifPresent, KEY_BATCH, KEY_ROUTES, pathKey } from './keys';

const pathMember = (input: RequestInput) => ({ ...pathKey(input), member: input.params.member as string });
/** `rev` is the text "true" or "false" in a query string, a JSON boolean in a batch item. */
const query = ({ query: q }: RequestInput) => ({ ...q, rev: q.rev === 'true' });

// Annotated, so that the type unions derived from the list of families never wait on the ops' inferred types.
export const zsets: Family<'zset', 'zset', 'ZCARD'> = defineFamily({
  name: 'zset',
  redisType: 'zset',
  sizeCommand: 'ZCARD',
  sample: ['ZADD', '1', 'm'],
  ops: zsetOps,
  batch: {
    add: 'add',
    get: 'get',
    range: 'range',
    score: 'score',
    setMember: 'setMember',
    incr: 'incr',
    removeMember: 'removeMember',
    remove: 'remove',
    cardinality: 'cardinality',
    pop: 'pop',
    ...KEY_BATCH,
  },
  routes: [
    {
      method: 'get',
      path: '/{key}',
      op: 'get',
      // As { ...query(i), ...pathKey(i) }, with one spread: a leaderboard's read is a hot path.
      input: (i) => ({ ...i.query, rev: i.query.rev === 'true', key: i.params.key as string }),
    },
    {
      method: 'post',
      path: '/{key}',
      op: 'add',
      input: (i) => ({ ...bodyKey<ZsetAddInput>(i), ifAbsent: ifAbsent(i) }),
    },
    { method: 'get', path: '/{key}/range', op: 'range', input: (i) => ({ ...query(i), ...pathKey(i) }) },
    { method: 'get', path: '/{key}/member/{member}', op: 'score', input: pathMember },
    {
      method: 'post',
      path: '/{key}/member/{member}',
      op: 'setMember',
      input: (i) => ({ ...pathMember(i), score: i.body.score as number, ifAbsent: ifAbsent(i) }),
    },
    {
      method: 'delete',
      path: '/{key}/member/{member}',
      op: 'removeMember',
      input: (i) => ({ ...pathMember(i), ifPresent: ifPresent(i) }),
      ownIfMatchStar: true,
    },
    {
      method: 'post',
      path: '/{key}/member/{member}/incr',
      op: 'incr',
      input: (i) => ({ ...(i.body as { by?: number; ttl?: number }), ...pathMember(i) }),
    },
    {
      method: 'post',
      path: '/{key}/remove',
      op: 'remove',
      input: (i) => ({ members: i.body.members as string[], ...pathKey(i) }),
    },
    {
      method: 'get',
      path: '/{key}/cardinality',
      op: 'cardinality',
      input: (i) => ({ ...i.query, ...pathKey(i) }),
    },
    { method: 'post', path: '/{key}/pop', op: 'pop', input: (i) => ({ ...(i.body ?? {}), ...pathKey(i) }) },
    { method: 'get', path: '/{key}/exists', op: 'exists', input: pathKey },
    ...KEY_ROUTES,
  ],
});
