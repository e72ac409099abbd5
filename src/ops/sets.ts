// Set operations: each says which commands it sends and what their replies mean; set algebra is computed here.
import { ApiError } from '../errors';
import { type KeyInput, keyOps } from './keys';
import {
  type CollectionWrite,
  collectionWrite,
  created,
  elementOp,
  type Op,
  ok,
  present,
  type ReadReply,
  readOp,
  typedRead,
  valued,
  writeOp,
} from './op';
import { type PageInput, paged, pageOp } from './pages';

/** `ifAbsent` is `If-None-Match: *`: write only when the key does not exist yet. */
export interface SetAddInput extends KeyInput, CollectionWrite {
  members: string[];
}
export interface MemberInput extends KeyInput {
  member: string;
}
export interface MemberAddInput extends MemberInput {
  /** `If-None-Match: *`: the member must not be in the set yet (409 duplicate_member otherwise). */
  ifAbsent?: boolean;
}
export interface MemberRemoveInput extends MemberInput {
  /** `If-Match: *`: the member must be in the set (404 member_not_found otherwise). */
  ifPresent?: boolean;
}
export interface AlgebraInput {
  keys: string[];
}

type Combine = (sets: string[][]) => string[];

const union: Combine = (sets) => [...new Set(sets.flat())];
const intersection: Combine = ([first = [], ...others]) => {
  const rest = others.map((members) => new Set(members));
  return first.filter((member) => rest.every((s) => s.has(member)));
};
const difference: Combine = ([first = [], ...others]) => {
  const rest = new Set(others.flat());
  return first.filter((member) => !rest.has(member));
};

/**
 * Set algebra reads every listed set with its own typed read and combines them here rather than with
 * SUNION/SINTER/SDIFF: the keys may live in different Redis Cluster slots, and a typed read per key is what
 * reports a key of another type as wrong_type (a missing key reads as the empty set). runOp sends the reads
 * as one batch (one atomic script call), so on a standalone Redis they see every set at the same moment.
 */
function algebra(name: 'union' | 'intersection' | 'difference', combine: Combine) {
  return ({ keys }: AlgebraInput): Op => ({
    writes: false,
    values: [name],
    keys,
    commands: keys.map((key) => typedRead('set', key, 'SMEMBERS')),
    result: (replies) => {
      const members = combine(replies.map((r) => ((r as ReadReply)?.[0] ?? []) as string[]));
      return ok({ [name]: members, cardinality: members.length });
    },
  });
}

/** A write of one member, whose answer names it. */
const memberOp = (...args: Parameters<typeof elementOp>): Op => valued(elementOp(...args), 'member');

export function setOps() {
  return {
    ...keyOps('set'),
    /** The whole set (at most UNPAGED_MAX members), or one page of it with `cursor`/`limit` (ops/pages.ts). */
    get: ({ key, ...page }: KeyInput & PageInput) =>
      valued(
        paged(page)
          ? pageOp('set', key, page, (p) => {
              const { items, size, ttl, cursor, complete } = present(p, key);
              return ok({ members: items, cardinality: size, ttl, cursor, complete });
            })
          : readOp(
              'set',
              key,
              (reply) => {
                const [members, ttl] = present(reply, key) as [string[], number];
                return ok({ members, cardinality: members.length, ttl });
              },
              'WHOLE',
              'SMEMBERS',
            ),
        'members',
      ),
    /** Merge (SADD) keeps the expiry; replace drops the old members and the expiry in the same script call. */
    add: ({ key, members, ...write }: SetAddInput) => {
      return writeOp(
        'set',
        key,
        collectionWrite(write, 'SCARD', 1),
        (r) => created(r?.[0] === 0, { success: true, key, members_count: r?.[2], added: r?.[1] }),
        'SADD',
        ...new Set(members),
      );
    },
    /** SADD writes nothing when the member is there, which is what If-None-Match asks for. */
    addMember: ({ key, member, ifAbsent }: MemberAddInput) =>
      memberOp(
        'set',
        key,
        ifAbsent && (() => new ApiError('duplicate_member', `Member '${member}' is already in set '${key}'`)),
        (added) => created(added, { success: true, member, added }),
        'SADD',
        member,
      ),
    removeMember: ({ key, member, ifPresent }: MemberRemoveInput) =>
      memberOp(
        'set',
        key,
        ifPresent && (() => new ApiError('member_not_found', `Member '${member}' not found in set '${key}'`)),
        (removed) => ok({ success: true, member, removed }),
        'SREM',
        member,
      ),
    isMember: ({ key, member }: MemberInput) =>
      readOp('set', key, (reply) => ok({ exists: reply?.[0] === 1 }), 'SISMEMBER', member),
    cardinality: ({ key }: KeyInput) =>
      readOp('set', key, (reply) => ok({ cardinality: present(reply, key)[0] }), 'SCARD'),
    /** Redis keeps no empty set, so a missing key is the only empty one: 404 not_found. */
    pop: ({ key }: KeyInput): Op => ({
      ...writeOp(
        'set',
        key,
        { condition: 'present' },
        (r) => ok({ success: true, member: present(r, key)[1] }),
        'SPOP',
      ),
      values: ['member'],
      pops: true,
    }),
    union: algebra('union', union),
    intersection: algebra('intersection', intersection),
    difference: algebra('difference', difference),
  };
}

export type SetOps = ReturnType<typeof setOps>;
