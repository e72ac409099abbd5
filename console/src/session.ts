// Signing in: the API key is kept in this tab's sessionStorage only, and the credential's permissions decide what shows.
import { createGateway, type Gateway, GatewayError } from '../../clients/typescript/src/index';

const STORAGE = 'redis-gateway-console:key';

export type Who = Awaited<ReturnType<Gateway['whoami']>>;

export interface Session {
  gw: Gateway;
  who: Who;
  canWrite: boolean;
  isAdmin: boolean;
}

/** Asks the service who `token` is (none: protected mode on loopback); remembers the token in this tab on success. */
export async function signIn(token: string | undefined): Promise<Session> {
  const gw = createGateway({ baseUrl: location.origin, token, retry: { retries: 2, maxDelayMs: 5000 } });
  const who = await gw.whoami();
  if (token) sessionStorage.setItem(STORAGE, token);
  return { gw, who, canWrite: who.permissions.includes('write'), isAdmin: who.permissions.includes('admin') };
}

export const savedToken = () => sessionStorage.getItem(STORAGE) ?? undefined;

export function forget(): void {
  sessionStorage.removeItem(STORAGE);
}

/** One line for a failure: the service's error type and message, or what went wrong on the way. */
export function describe(err: unknown): string {
  if (err instanceof GatewayError) return `${err.status || 'network'} ${err.error}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

export const isConflict = (err: unknown) => err instanceof GatewayError && err.status === 412;
