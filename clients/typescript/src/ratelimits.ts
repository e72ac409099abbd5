// client.ratelimits: rate limits for your own callers: define a policy, check (spend) or peek, reset.
import type { components } from './schema.js';
import { type Api, type CallOptions, unwrap } from './transport.js';

export type RateLimitPolicy = components['schemas']['RateLimitPolicyRequest'];
export type RateLimitDecision = components['schemas']['RateLimitDecision'];

const at = (policy: string) => ({ params: { path: { policy } } });
const JSON_HEADERS = { 'Content-Type': 'application/json' };
/** One identifier or several (decided together: spent on all of them or on none). */
const who = (identifiers: string | string[]) =>
  typeof identifiers === 'string' ? { identifier: identifiers } : { identifiers };

export function ratelimits(api: Api) {
  const decide =
    (path: '/store/ratelimits/{policy}/check' | '/store/ratelimits/{policy}/peek') =>
    async (policy: string, identifiers: string | string[], options: CallOptions & { cost?: number } = {}) => {
      const body = { ...who(identifiers), ...(options.cost === undefined ? {} : { cost: options.cost }) };
      return (
        await unwrap(api.POST(path, { ...at(policy), body, headers: JSON_HEADERS, signal: options.signal }))
      ).data;
    };
  return {
    /** Creates or replaces the policy; answers whether it is new. */
    async define(policy: string, definition: RateLimitPolicy, options: CallOptions = {}): Promise<boolean> {
      const { data } = await unwrap(
        api.POST('/store/ratelimits/{policy}', {
          ...at(policy),
          body: definition,
          headers: JSON_HEADERS,
          signal: options.signal,
        }),
      );
      return data.created;
    },
    /** Spends `cost` (default 1) when it fits for every identifier; `allowed` says whether it did. */
    check: decide('/store/ratelimits/{policy}/check'),
    /** As check, spending nothing. */
    peek: decide('/store/ratelimits/{policy}/peek'),
    /** Gives the identifiers their whole quota back. */
    async reset(policy: string, identifiers: string | string[], options: CallOptions = {}): Promise<number> {
      const { data } = await unwrap(
        api.POST('/store/ratelimits/{policy}/reset', {
          ...at(policy),
          body: who(identifiers),
          headers: JSON_HEADERS,
          signal: options.signal,
        }),
      );
      return data.reset;
    },
  };
}
