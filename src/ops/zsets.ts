// Sorted set operations: each says which commands it sends and what their replies mean.
import { ApiError } from '../errors';
import { type KeyInput, keyOps } from './keys';
import {
  type CollectionWrite,
  collectionWrite,
  created,
  declareValues,
  elementOp,
  type Op,
  ok,
  present,
  type ReadReply,
  readOp,
  typedRead,
  typedWrite,
  type WriteReply,
  writeOp,
} from './op';
import { page, redisScore, type Score, type ScoreBound, scored, scoreOf } from './zset-scores';

/** A page of members when the request names no `limit` (the contract documents it and the maximum, 1000). */
export const DEFAULT_LIMIT = 100;

/** `ifAbsent` is `If-None-Match: *`; `only` is ZADD's NX (`new`) or XX (`existing`). */
export interface ZsetAddInput extends KeyInput, CollectionWrite {
  members: Record<string, Score>;
  only?: 'new' | 'existing';
}
export interface PageInput extends KeyInput {
  offset?: number;
  limit?: number;
  rev?: boolean;
}
export interface RangeInput extends PageInput {
  min?: ScoreBound;
  max?: ScoreBound;
}
export interface CountInput extends KeyInput {
  min?: ScoreBound;
  max?: ScoreBound;
}
export interface ZmemberInput extends KeyInput {
  member: string;
}
export interface ZmemberSetInput extends ZmemberInput {
  score: Score;
  /** `If-None-Match: *`: the member must not be in the sorted set yet (409 duplicate_member otherwise). */
  ifAbsent?: boolean;
}
export interface ZmemberIncrInput extends ZmemberInput {
  by?: Score;
  /** Set only when this call creates the key. */
  ttl?: number;
}
export interface ZmemberRemoveInput extends ZmemberInput {
  /** `If-Match: *`: the member must be in the sorted set (404 member_not_found otherwise). */
  ifPresent?: boolean;
}
export interface ZremoveInput extends KeyInput {
  members: string[];
}
export interface ZpopInput extends KeyInput {
  end?: 'min' | 'max';
  count?: number;
}

const memberNotFound = (member: string, key: string) =>
  new ApiError('member_not_found', `Member '${member.slice(0, 100)}' not found in sorted set '${key}'`);

/** [key existed, member existed, new score as Redis stores it, TTL]: see typed_incr in typed.lua. */
type IncrReply = [number, number, string, number];

/**
 * ZADD answers either the members added or (CH) those added or changed, not both: the cardinality read just
 * before it, in the same atomic script call, tells them apart.
 */
function add({ key, members, only, ...write }: ZsetAddInput): Op {
  if (only === 'existing' && write.mode === 'replace') {
    throw new ApiError('invalid_request', "'only: existing' with 'mode: replace' would write nothing");
  }
  const flags = only === 'new' ? ' NX CH' : only === 'existing' ? ' XX CH' : ' CH';
  const args = Object.entries(members).flatMap(([member, score]) => [redisScore(score), member]);
  return {
    writes: true,
    keys: [key],
    commands: [
      typedRead('zset', key, 'ZCARD'),
      typedWrite('zset', key, collectionWrite(write, 'ZCARD', 2), `ZADD${flags}`, ...args),
    ],
    result: ([read, written]) => {
      const [existed, changed, cardinality] = written as [number, number, number];
      const replaced = write.mode === 'replace';
      const added = replaced ? cardinality : cardinality - (((read as ReadReply)?.[0] as number) ?? 0);
      const body = { success: true, key, added, updated: replaced ? 0 : changed - added, cardinality };
      return created(existed === 0 && cardinality > 0, body);
    },
  };
}

/** min and max are the low and high bound whatever the order; ZRANGE ... BYSCORE REV takes them high first. */
function bounds(min: ScoreBound = '-inf', max: ScoreBound = '+inf', rev = false): string[] {
  return rev ? [redisScore(max), redisScore(min)] : [redisScore(min), redisScore(max)];
}

export function zsetOps() {
  const ops = {
    ...keyOps('zset'),
    add,
    /** One element more than asked tells whether the page is the last. */
    get: ({ key, offset = 0, limit = DEFAULT_LIMIT, rev }: PageInput) =>
      readOp(
        'zset',
        key,
        (reply) => ok(page(present(reply, key), limit, offset)),
        'ZRANGE',
        offset,
        offset + limit,
        ...(rev ? ['REV'] : []),
        'WITHSCORES',
      ),
    range: ({ key, min, max, rev, offset = 0, limit = DEFAULT_LIMIT }: RangeInput) =>
      readOp(
        'zset',
        key,
        (reply) => ok(page(present(reply, key), limit, offset)),
        'ZRANGE',
        ...bounds(min, max, rev),
        'BYSCORE',
        ...(rev ? ['REV'] : []),
        'LIMIT',
        offset,
        limit + 1,
        'WITHSCORES',
      ),
    /** Score, rank from the lowest and rank from the highest, read at one moment. */
    score: ({ key, member }: ZmemberInput): Op => ({
      writes: false,
      keys: [key],
      commands: ['ZSCORE', 'ZRANK', 'ZREVRANK'].map((command) => typedRead('zset', key, command, member)),
      result: (replies) => {
        const [score, rank, revRank] = (replies as ReadReply[]).map((r) => r?.[0] ?? null);
        if (score === null) throw memberNotFound(member, key);
        return ok({ member, score: scoreOf(score as string), rank, rev_rank: revRank });
      },
    }),
    /** ZADD NX writes nothing when the member is there, which is what If-None-Match asks for. */
    setMember: ({ key, member, score, ifAbsent }: ZmemberSetInput) =>
      elementOp(
        'zset',
        key,
        ifAbsent &&
          (() => new ApiError('duplicate_member', `Member '${member}' is already in sorted set '${key}'`)),
        (added) => created(added, { success: true, member, score, added }),
        'ZADD',
        ...(ifAbsent ? ['NX'] : []),
        redisScore(score),
        member,
      ),
    /** A missing member starts at 0 (201); `ttl` applies only when this call creates the key. */
    incr: ({ key, member, by = 1, ttl }: ZmemberIncrInput): Op => ({
      writes: true,
      keys: [key],
      commands: [
        { name: 'typedIncr', keys: [key], args: ['zset', ttl ?? '', 'ZINCRBY', redisScore(by), member] },
      ],
      result: ([reply]) => {
        const [, had, stored, remaining] = reply as IncrReply;
        return created(had === 0, { success: true, member, score: scoreOf(stored), ttl: remaining });
      },
    }),
    removeMember: ({ key, member, ifPresent }: ZmemberRemoveInput) =>
      elementOp(
        'zset',
        key,
        ifPresent && (() => memberNotFound(member, key)),
        (removed) => ok({ success: true, member, removed }),
        'ZREM',
        member,
      ),
    remove: ({ key, members }: ZremoveInput) =>
      writeOp(
        'zset',
        key,
        { count: 'ZCARD', stride: 1 },
        (r: WriteReply) => ok({ success: true, removed: r?.[1], cardinality: r?.[2] }),
        'ZREM',
        ...new Set(members),
      ),
    /** With `min` or `max`: the members within that score range (ZCOUNT). */
    cardinality: ({ key, min, max }: CountInput) =>
      readOp(
        'zset',
        key,
        (reply) => ok({ cardinality: present(reply, key)[0] }),
        ...(min === undefined && max === undefined ? ['ZCARD'] : ['ZCOUNT', ...bounds(min, max)]),
      ),
    /** Redis keeps no empty sorted set, so a missing key is the only empty one: 404 not_found. */
    pop: ({ key, end = 'min', count = 1 }: ZpopInput) =>
      writeOp(
        'zset',
        key,
        { condition: 'present' },
        (r) => ok({ success: true, members: scored(present(r, key)[1] as string[]) }),
        end === 'max' ? 'ZPOPMAX' : 'ZPOPMIN',
        count,
      ),
  };
  const member = ['member'];
  const values = { get: ['members'], range: ['members'], pop: ['members'] };
  return declareValues(
    ops,
    { ...values, score: member, setMember: member, incr: member, removeMember: member },
    ['pop'],
  );
}

export type ZsetOps = ReturnType<typeof zsetOps>;
