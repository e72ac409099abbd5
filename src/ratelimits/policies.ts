// Rate-limit policies for callers' own use: define, read, delete, overrides, and decisions (check, peek, reset).
import { sendInternal } from '../engine/send';
import { ApiError } from '../errors';
import type { Store } from '../redis/store';

export type Algorithm = 'fixed_window' | 'sliding_window' | 'token_bucket';

export interface Policy {
  algorithm: Algorithm;
  limit: number;
  period_ms: number;
  /** Token bucket only: how many tokens the bucket holds (a burst); `limit` by default. */
  burst?: number;
}

export interface IdentifierDecision {
  identifier: string;
  allowed: boolean;
  limit: number;
  remaining: number;
  reset_ms: number;
  retry_after_ms: number;
}

export interface Decision {
  policy: string;
  allowed: boolean;
  period_ms: number;
  /** The identifier with the least room left (the one the headers describe). */
  tightest: IdentifierDecision;
  identifiers: IdentifierDecision[];
}

const policyMissing = (name: string) =>
  new ApiError(
    'not_found',
    `Rate-limit policy '${name}' does not exist (define it with POST /store/ratelimits/${name})`,
  );

export class Policies {
  constructor(private readonly storeOf: () => Store) {}

  /** Creates or replaces a policy: true when it is new. Its counters are kept (a new algorithm starts them afresh). */
  async define(name: string, policy: Policy): Promise<boolean> {
    if (policy.burst !== undefined && policy.algorithm !== 'token_bucket')
      throw new ApiError('invalid_request', '`burst` applies to the token_bucket algorithm only');
    const keys = this.keys(name);
    const burst = policy.burst ?? policy.limit;
    const fields = [
      'algorithm',
      policy.algorithm,
      'limit',
      policy.limit,
      'period_ms',
      policy.period_ms,
      'burst',
      burst,
    ];
    const added = await sendInternal(this.store, 'hset', keys.policy, [keys.policy, ...fields], true);
    return added === 4;
  }

  async read(name: string): Promise<Policy & { name: string; overrides: number }> {
    const keys = this.keys(name);
    const fields = (await sendInternal(this.store, 'hgetall', keys.policy, [keys.policy], false)) as Record<
      string,
      string
    >;
    if (!fields.algorithm) throw policyMissing(name);
    const overrides = (await sendInternal(
      this.store,
      'hlen',
      keys.overrides,
      [keys.overrides],
      false,
    )) as number;
    const policy = {
      name,
      algorithm: fields.algorithm as Algorithm,
      limit: Number(fields.limit),
      period_ms: Number(fields.period_ms),
      overrides,
    };
    return fields.algorithm === 'token_bucket' ? { ...policy, burst: Number(fields.burst) } : policy;
  }

  /** Deletes the policy and its overrides; its counters expire by themselves. True when it existed. */
  async remove(name: string): Promise<boolean> {
    const keys = this.keys(name);
    const removed = await sendInternal(this.store, 'del', keys.policy, [keys.policy, keys.overrides], true);
    return (removed as number) > 0;
  }

  /** Sets an identifier's own limit (and burst); true when it had none. */
  async override(name: string, identifier: string, limit: number, burst = limit): Promise<boolean> {
    await this.read(name);
    const keys = this.keys(name);
    const added = await sendInternal(
      this.store,
      'hset',
      keys.overrides,
      [keys.overrides, identifier, `${limit}:${burst}`],
      true,
    );
    return added === 1;
  }

  async dropOverride(name: string, identifier: string): Promise<boolean> {
    const keys = this.keys(name);
    return (await sendInternal(this.store, 'hdel', keys.overrides, [keys.overrides, identifier], true)) === 1;
  }

  /** Forgets what the identifiers spent: each starts with its whole quota. */
  async reset(name: string, identifiers: readonly string[]): Promise<number> {
    const keys = this.keys(name);
    const counters = identifiers.map(keys.counter);
    return (await sendInternal(this.store, 'del', keys.policy, counters, true)) as number;
  }

  /** `check` spends `cost` on every identifier when each has room for it (else on none); `peek` spends nothing. */
  async decide(
    name: string,
    mode: 'check' | 'peek',
    identifiers: readonly string[],
    cost: number,
  ): Promise<Decision> {
    const keys = this.keys(name);
    const ids = [...new Set(identifiers)];
    const argv = [ids.length + 2, keys.policy, keys.overrides, ...ids.map(keys.counter), mode, cost, ...ids];
    const reply = await sendInternal(this.store, 'quotaCheck', keys.policy, argv, mode === 'check');
    if (!reply) throw policyMissing(name);
    const [all, period, answers] = reply as [number, number, number[][]];
    const decisions = ids.map((identifier, i) => {
      const [allowed, limit, remaining, reset, retry] = answers[i] as number[];
      return {
        identifier,
        allowed: allowed === 1,
        limit: limit as number,
        remaining: remaining as number,
        reset_ms: reset as number,
        retry_after_ms: retry as number,
      };
    });
    const tightest = decisions.reduce((a, b) =>
      (!b.allowed && a.allowed) || (b.allowed === a.allowed && b.remaining < a.remaining) ? b : a,
    );
    return { policy: name, allowed: all === 1, period_ms: period, tightest, identifiers: decisions };
  }

  private get store(): Store {
    return this.storeOf();
  }

  private keys(name: string) {
    return this.store.keyspace.quota(name);
  }
}
