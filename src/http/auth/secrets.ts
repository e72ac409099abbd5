// Secret handling for credentials: SHA-256 digests of API keys, scrypt password hashes, constant-time checks.
import { hash, randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

export const sha256 = (text: string): Buffer => hash('sha256', text, 'buffer');

/**
 * The stored password format is `<salt hex>:<hash hex>`: scrypt with these parameters (N=16384, r=8, p=1,
 * 64-byte hash). `scripts/key-new.mjs` writes the same format; a test checks that they agree.
 */
export const SCRYPT = { N: 16384, r: 8, p: 1, keyLength: 64 } as const;
export const PASSWORD_SCRYPT_PATTERN = '^[0-9a-f]{32,}:[0-9a-f]{128}$';

export interface PasswordHash {
  readonly salt: Buffer;
  readonly hash: Buffer;
}

export function parsePasswordHash(text: string): PasswordHash {
  const [salt = '', hash = ''] = text.split(':');
  return { salt: Buffer.from(salt, 'hex'), hash: Buffer.from(hash, 'hex') };
}

function derive(password: string, salt: Buffer): Promise<Buffer> {
  const options: ScryptOptions = { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p };
  return new Promise((resolve, reject) =>
    scrypt(password, salt, SCRYPT.keyLength, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** A hash to check unknown usernames against, so that they take as long as wrong passwords. */
export const DECOY_HASH: PasswordHash = { salt: randomBytes(16), hash: randomBytes(SCRYPT.keyLength) };

/** Runs on the libuv thread pool: a slow hash must not block the event loop. */
export async function passwordMatches(password: string, stored: PasswordHash): Promise<boolean> {
  const derived = await derive(password, stored.salt);
  return derived.length === stored.hash.length && timingSafeEqual(derived, stored.hash);
}

/**
 * Finds the entry whose digest equals `digest`, comparing every entry in constant time (no early exit),
 * so the answer time does not depend on which key, or how much of one, matched.
 */
export function findByDigest<T extends { readonly digest: Buffer }>(
  entries: readonly T[],
  digest: Buffer,
): T | undefined {
  let found: T | undefined;
  for (const entry of entries) {
    if (timingSafeEqual(entry.digest, digest) && found === undefined) found = entry;
  }
  return found;
}
