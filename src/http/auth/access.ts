// Authentication middleware and authorization (permissions, tenant prefixes) over swappable credentials.
import type { RequestHandler, Response } from 'express';
import type { Config } from '../../config';
import { ApiError, REDIS_RETRY_AFTER } from '../../errors';
import type { Access } from '../context';
import type { Permission } from '../contract';
import { limiterFailed } from '../uncounted';
import { credentialChanges } from './changes';
import { type Credentials, loadCredentials } from './credentials';
import { identify } from './identify';
import type { Principal } from './principal';

/** Unauthenticated requests while the rate limiter cannot count: refused rather than unlimited. */
function limiterUnavailable(): ApiError {
  return new ApiError(
    'service_unavailable',
    'The rate limiter cannot reach Redis: requests without valid credentials are refused until it can',
    { retryAfter: REDIS_RETRY_AFTER },
  );
}

const SCHEME_NAMES: Record<Principal['scheme'], string> = {
  api_key: 'API key',
  jwt: 'JWT subject',
  basic: 'Basic user',
  none: 'anonymous caller',
};
const describe = (p: Principal) =>
  p.scheme === 'none' ? SCHEME_NAMES.none : `${SCHEME_NAMES[p.scheme]} '${p.id}'`;

/** The principal `authenticate` stored for this request (undefined on paths it does not guard). */
export const principalOf = (res: Response): Principal | undefined => res.locals.principal;

export class Auth implements Access {
  /** One reference, swapped whole by reload: a request uses the snapshot it started with. */
  private credentials: Credentials;

  /** Throws a ConfigError listing every problem of the keys file, inline keys or JWT key. */
  constructor(config: Config) {
    this.credentials = loadCredentials(config);
  }

  /**
   * Re-reads SVC_API_KEYS, SVC_API_KEYS_FILE and the JWT key of `config`, and says what changed (by id); on a
   * ConfigError the old ones stay.
   */
  reload(config: Config): string[] {
    const before = this.credentials;
    this.credentials = loadCredentials(config);
    return credentialChanges(before, this.credentials);
  }

  /**
   * Identifies the caller into `res.locals.principal`, or answers 401 / 403 (protected mode). API keys are
   * checked synchronously; Express 5 passes a thrown error or a rejected promise on to the error handler.
   */
  readonly authenticate: RequestHandler = (req, res, next) => {
    // The rate limiter's failure policy (rate-limit.ts): only an authenticated caller goes on uncounted.
    const uncounted = limiterFailed(res);
    let found: Principal | Promise<Principal>;
    try {
      found = identify(req, this.credentials);
    } catch (err) {
      throw uncounted ? limiterUnavailable() : err;
    }
    if (!(found instanceof Promise)) {
      if (uncounted && found.scheme === 'none') throw limiterUnavailable();
      res.locals.principal = found;
      return next();
    }
    return found.then(
      (principal) => {
        res.locals.principal = principal;
        next();
      },
      (err: unknown) => {
        throw uncounted ? limiterUnavailable() : err;
      },
    );
  };

  /**
   * Whether `principal` (of a stream opened earlier) still stands with the current credentials: its API key or
   * Basic user is there with the same grant, the JWT key is unchanged, or (anonymous) still no credential is
   * configured. Read after a reload, to close the streams of credentials that were removed or changed.
   */
  stillValid(principal: Principal, before: Credentials): boolean {
    const now = this.credentials;
    const same = (p: Principal) =>
      p.id === principal.id &&
      p.prefix === principal.prefix &&
      p.permissions.join() === principal.permissions.join();
    switch (principal.scheme) {
      case 'none':
        return !now.configured;
      case 'api_key': {
        const entry = now.keys.find((k) => same(k.principal));
        const old = before.keys.find((k) => same(k.principal));
        return entry !== undefined && old !== undefined && entry.digest.equals(old.digest);
      }
      case 'basic': {
        const entry = [...now.users.values()].find((u) => same(u.principal));
        return (
          entry !== undefined &&
          [...before.users.values()].some((u) => u.password.hash.equals(entry.password.hash))
        );
      }
      case 'jwt':
        return (
          now.jwt !== undefined && credentialChanges(before, now).every((line) => !line.startsWith('JWT'))
        );
    }
  }

  /** The credentials in use now (a reload replaces them). */
  get current(): Credentials {
    return this.credentials;
  }

  /** 403 unless the caller holds `permission` and every key starts with its prefix (if it has one). */
  authorize(res: Response, permission: Permission, keys: readonly string[]): void {
    const principal = principalOf(res);
    if (!principal) throw new Error('authorize() ran on a request that authenticate did not see');
    if (!principal.permissions.includes(permission)) {
      throw new ApiError('forbidden', `${describe(principal)} lacks the '${permission}' permission`);
    }
    const { prefix } = principal;
    if (prefix === undefined) return;
    for (const key of keys) {
      if (!key.startsWith(prefix))
        throw new ApiError(
          'forbidden',
          `Key '${key}' is outside the prefix '${prefix}' of ${describe(principal)}`,
        );
    }
  }
}
