// Who a request acts as, whichever credential (API key, JWT, Basic) or none it came with.
import type { Permission } from '../contract';

/** Who a request acts as: an id, its permissions and, for a tenant, the prefix every key must start with. */
export interface Principal {
  readonly id: string;
  readonly scheme: 'api_key' | 'jwt' | 'basic' | 'none';
  readonly permissions: readonly Permission[];
  readonly prefix?: string;
  /** A JWT's `exp` in ms since the epoch: open streams of this caller are closed then. */
  readonly expiresAt?: number;
}

/**
 * A tenant prefix: the start of a valid key that ends with a delimiter (`:`, `.`, `-` or `_`), so that it names
 * where a tenant's keys begin: `tenant-a` would also grant `tenant-ab:...`, `tenant-a:` does not.
 */
export const TENANT_PREFIX_PATTERN = '^[A-Za-z0-9_.:-]{0,1023}[:._-]$';
export const TENANT_PREFIX_RULE =
  "must be 1..1024 characters of A-Z a-z 0-9 _ . : - ending with a delimiter (':', '.', '-' or '_'), such as 'tenant-a:'";
