// Who is calling: the Authorization header (API key, JWT, Basic) -> a principal, or a 401/403 naming the cause.
import type { Request } from 'express';
import { decodeCanonical } from '../../base64';
import { ApiError } from '../../errors';
import type { Credentials } from './credentials';
import { looksLikeJwt, verifyJwt } from './jwt';
import type { Principal } from './principal';
import { DECOY_HASH, findByDigest, passwordMatches, sha256 } from './secrets';

/** The caller when no credential is configured (open, or a loopback client in protected mode). */
export const ANONYMOUS: Principal = {
  id: 'anonymous',
  scheme: 'none',
  permissions: ['read', 'write', 'admin'],
};

export const PROTECTED_MODE_MESSAGE =
  'Protected mode: no credentials are configured, so only loopback clients are served. Configure API keys ' +
  '(SVC_API_KEYS_FILE or SVC_API_KEYS; create one with npm run key:new), or a JWT key (SVC_JWT_SECRET or ' +
  'SVC_JWT_PUBLIC_KEY_FILE), or set SVC_PROTECTED_MODE=false to serve every client without authentication';

/** Remembered verified (and, apart, refused) Basic credentials, at most; the map is dropped with its snapshot on reload. */
const VERIFIED_BASIC_MAX = 1000;

const isLoopback = (ip: string | undefined) =>
  ip !== undefined && (ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.'));

/** WWW-Authenticate: the schemes this configuration accepts (RFC 6750 `error` once a token was refused). */
function challenge(creds: Credentials, refusedToken: boolean): string {
  const schemes: string[] = [];
  if (creds.keys.length > 0 || creds.jwt || creds.users.size === 0)
    schemes.push(`Bearer realm="store"${refusedToken ? ', error="invalid_token"' : ''}`);
  if (creds.users.size > 0) schemes.push('Basic realm="store", charset="UTF-8"');
  return schemes.join(', ');
}

/** The accepted forms of the Authorization header, for 401 messages. */
function accepted(creds: Credentials): string {
  const ways: string[] = [];
  if (creds.keys.length > 0 || (!creds.jwt && creds.users.size === 0)) ways.push('Bearer <API key>');
  if (creds.jwt) ways.push('Bearer <JWT>');
  if (creds.users.size > 0) ways.push('Basic <base64 of username:password>');
  return `Authorization: ${ways.join(' or ')}`;
}

/** An API key is checked synchronously (the common case costs no promise); a JWT is verified asynchronously. */
function bearer(token: string, creds: Credentials): Principal | string | Promise<Principal | string> {
  const key = findByDigest(creds.keys, sha256(token));
  if (key) return key.principal;
  const jwt = looksLikeJwt(token);
  if (jwt && creds.jwt) return verifyJwt(token, creds.jwt);
  if (creds.jwt && creds.keys.length === 0) return 'Malformed JWT: expected header.payload.signature';
  return jwt ? 'Invalid API key (JWTs are not accepted: no JWT key is configured)' : 'Invalid API key';
}

const BAD_BASIC = 'Bad Basic credentials: unknown username or wrong password';

/**
 * Password checks (scrypt, ~16 MiB and tens of ms each on the libuv pool) running at once, at most: beyond it a
 * Basic credential not seen before is refused at once (503) rather than queued, so that guessing cannot hold the
 * pool (file, DNS and zlib work wait behind it) nor memory. Below libuv's default pool of 4.
 */
export const SCRYPT_MAX_CONCURRENT = 2;
let hashing = 0;

function busy(): ApiError {
  return new ApiError(
    'service_unavailable',
    `Too many Basic password checks in progress (at most ${SCRYPT_MAX_CONCURRENT} at once); retry shortly`,
    { retryAfter: 1 },
  );
}

/** Remembers a verified or refused credential (by the header's digest) so that it costs scrypt once. */
function remember<T>(map: Map<string, T>, digest: string, value: T): void {
  if (map.size >= VERIFIED_BASIC_MAX) map.clear();
  map.set(digest, value);
}

async function basic(encoded: string, creds: Credentials): Promise<Principal | string> {
  if (creds.users.size === 0) return 'HTTP Basic is not enabled: no users are configured';
  const remembered = sha256(encoded).toString('hex');
  const known = creds.verifiedBasic.get(remembered);
  if (known) return known;
  if (creds.refusedBasic.has(remembered)) return BAD_BASIC;
  const decoded = decodeCanonical(encoded)?.toString('utf8') ?? '';
  const colon = decoded.indexOf(':');
  if (colon < 1) return 'Malformed Basic credentials: expected base64 of username:password';
  const user = creds.users.get(decoded.slice(0, colon));
  if (hashing >= SCRYPT_MAX_CONCURRENT) throw busy();
  hashing++;
  let matches: boolean;
  try {
    // An unknown user costs a hash too, so that timing does not tell which usernames exist.
    matches = await passwordMatches(decoded.slice(colon + 1), user?.password ?? DECOY_HASH);
  } finally {
    hashing--;
  }
  if (!user || !matches) {
    remember(creds.refusedBasic, remembered, true);
    return BAD_BASIC;
  }
  remember(creds.verifiedBasic, remembered, user.principal);
  return user.principal;
}

/**
 * The principal of a request, or throws 401 unauthorized / 403 forbidden (protected mode). Synchronous for API
 * keys and anonymous callers; a promise for JWTs and Basic credentials.
 */
export function identify(req: Request, creds: Credentials): Principal | Promise<Principal> {
  if (!creds.configured) {
    // The connection itself must come from loopback: a trusted X-Forwarded-For cannot make a remote client local.
    if (!creds.protectedMode || (isLoopback(req.socket.remoteAddress) && isLoopback(req.ip)))
      return ANONYMOUS;
    throw new ApiError('forbidden', PROTECTED_MODE_MESSAGE);
  }
  const header = req.headers.authorization?.trim() ?? '';
  const unauthorized = (reason: string, refusedToken = false) =>
    new ApiError('unauthorized', reason, { headers: { 'WWW-Authenticate': challenge(creds, refusedToken) } });
  if (header === '') throw unauthorized(`Missing credentials: send ${accepted(creds)}`);
  const space = header.indexOf(' ');
  const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase();
  const value = space < 0 ? '' : header.slice(space + 1).trim();
  if (scheme !== 'bearer' && scheme !== 'basic')
    throw unauthorized(`Unsupported Authorization scheme '${scheme}': send ${accepted(creds)}`);
  if (value === '') throw unauthorized(`Empty ${scheme === 'bearer' ? 'Bearer token' : 'Basic credentials'}`);
  const outcome = (found: Principal | string): Principal => {
    if (typeof found === 'string') throw unauthorized(found, scheme === 'bearer');
    return found;
  };
  const found = scheme === 'bearer' ? bearer(value, creds) : basic(value, creds);
  return found instanceof Promise ? found.then(outcome) : outcome(found);
}
