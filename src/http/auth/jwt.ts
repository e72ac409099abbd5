// JWT bearer tokens (jose): the verification key from config, and a token -> principal or the reason it fails.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { errors, jwtVerify } from 'jose';
import type { Config } from '../../config';
import type { Permission } from '../contract';
import { type Principal, TENANT_PREFIX_PATTERN, TENANT_PREFIX_RULE } from './principal';

export interface JwtKey {
  readonly key: KeyObject | Uint8Array;
  readonly algorithms: string[];
  readonly issuer?: string;
  readonly audience?: string;
}

/** RS256 for an RSA public key, ES256 for a P-256 one (PEM or JWK); `undefined` with a problem otherwise. */
function publicKey(file: string, problems: string[]): KeyObject | undefined {
  try {
    const text = readFileSync(file, 'utf8');
    return text.trim().startsWith('{')
      ? createPublicKey({ key: JSON.parse(text), format: 'jwk' })
      : createPublicKey(text);
  } catch (err) {
    problems.push(`SVC_JWT_PUBLIC_KEY_FILE ${file}: ${(err as Error).message}`);
    return undefined;
  }
}

function algorithmOf(key: KeyObject): string | undefined {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
  return undefined;
}

/** The key JWTs are checked with, or undefined when JWTs are not configured. Problems are pushed. */
export function loadJwtKey(auth: Config['auth'], problems: string[]): JwtKey | undefined {
  const claims = { issuer: auth.jwtIssuer, audience: auth.jwtAudience };
  if (auth.jwtSecret) {
    return { key: new TextEncoder().encode(auth.jwtSecret), algorithms: ['HS256'], ...claims };
  }
  if (!auth.jwtPublicKeyFile) return undefined;
  const key = publicKey(auth.jwtPublicKeyFile, problems);
  if (!key) return undefined;
  const algorithm = algorithmOf(key);
  if (!algorithm) {
    problems.push(
      `SVC_JWT_PUBLIC_KEY_FILE ${auth.jwtPublicKeyFile}: use an RSA (RS256) or P-256 EC (ES256) public key`,
    );
    return undefined;
  }
  return { key, algorithms: [algorithm], ...claims };
}

/** A compact JWS: three base64url parts. API keys made by key:new never contain a dot. */
export const looksLikeJwt = (token: string) => /^[\w-]+\.[\w-]+\.[\w-]*$/.test(token);

const PERMISSIONS: readonly string[] = ['read', 'write', 'admin'];
const PREFIX = new RegExp(TENANT_PREFIX_PATTERN);

/** `permissions`: an array, or a space-separated string as OAuth scopes are; other values are ignored. */
function permissionsOf(claim: unknown): Permission[] {
  const list = typeof claim === 'string' ? claim.split(' ') : Array.isArray(claim) ? claim : [];
  return list.filter((p): p is Permission => PERMISSIONS.includes(p));
}

function reasonOf(err: unknown, jwt: JwtKey): string {
  if (err instanceof errors.JWTExpired) return 'JWT expired';
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'JWT signature is invalid';
  if (err instanceof errors.JWTClaimValidationFailed)
    return `JWT claim '${err.claim}' is invalid: ${err.message}`;
  if (err instanceof errors.JOSEAlgNotAllowed)
    return `JWT algorithm is not accepted (expected ${jwt.algorithms.join(', ')})`;
  if (err instanceof errors.JOSEError) return 'JWT is malformed';
  throw err;
}

/** The principal a token stands for, or the reason (for the 401 message) why it does not stand for one. */
export async function verifyJwt(token: string, jwt: JwtKey): Promise<Principal | string> {
  try {
    const { payload } = await jwtVerify(token, jwt.key, {
      algorithms: jwt.algorithms,
      issuer: jwt.issuer,
      audience: jwt.audience,
      requiredClaims: ['exp'],
    });
    if (payload.prefix !== undefined && (typeof payload.prefix !== 'string' || !PREFIX.test(payload.prefix)))
      return `JWT claim 'prefix' is not a valid tenant prefix: it ${TENANT_PREFIX_RULE}`;
    return {
      id: typeof payload.sub === 'string' ? payload.sub : 'jwt',
      scheme: 'jwt',
      permissions: permissionsOf(payload.permissions),
      ...(payload.prefix === undefined ? {} : { prefix: payload.prefix }),
      ...(typeof payload.exp === 'number' ? { expiresAt: payload.exp * 1000 } : {}),
    };
  } catch (err) {
    return reasonOf(err, jwt);
  }
}
