// Who a request acts as, whichever credential (API key, JWT, Basic) or none it came with.
import type { Permission } from '../contract';

/** Who a request acts as: an id, its permissions and, for a tenant, the prefix every key must start with. */
export interface Principal {
  readonly id: string;
  readonly scheme: 'api_key' | 'jwt' | 'basic' | 'none';
  readonly permissions: readonly Permission[];
  readonly prefix?: string;
}
