// One snapshot of what authenticates callers (API keys, Basic users, JWT key), read from a Config.
import { readFileSync } from 'node:fs';
import { type Config, ConfigError } from '../../config';
import { type JwtKey, loadJwtKey } from './jwt';
import { type KeyEntry, parseKeysFile, type UserEntry } from './keys-file';
import type { Principal } from './principal';

export interface Credentials {
  /** False when no credential setting is set: protected mode (or open, with SVC_PROTECTED_MODE=false). */
  readonly configured: boolean;
  readonly protectedMode: boolean;
  readonly keys: readonly KeyEntry[];
  readonly users: ReadonlyMap<string, UserEntry>;
  readonly jwt?: JwtKey;
  /** Basic credentials already verified (sha256 of the header -> principal): scrypt runs once per user. */
  readonly verifiedBasic: Map<string, Principal>;
  /** Basic credentials already refused (sha256 of the header): a repeated wrong guess costs no scrypt run. */
  readonly refusedBasic: Map<string, true>;
}

/** True when any credential is configured (API keys, Basic users, JWT): the info endpoint's `features.authentication`. */
export function authenticationConfigured(config: Config): boolean {
  const { apiKeys, apiKeysFile, jwtSecret, jwtPublicKeyFile } = config.auth;
  return Boolean(apiKeys || apiKeysFile || jwtSecret || jwtPublicKeyFile);
}

/** Reads the keys (inline and file) and the JWT key; throws a ConfigError listing every problem. */
export function loadCredentials(config: Config): Credentials {
  const { auth } = config;
  const problems: string[] = [];
  const parsed = { keys: [], users: new Map() };
  if (auth.apiKeys) parseKeysFile(auth.apiKeys, 'SVC_API_KEYS', parsed, problems);
  if (auth.apiKeysFile) {
    let text: string | undefined;
    try {
      text = readFileSync(auth.apiKeysFile, 'utf8');
    } catch (err) {
      problems.push(`SVC_API_KEYS_FILE: cannot read ${auth.apiKeysFile}: ${(err as Error).message}`);
    }
    if (text !== undefined) parseKeysFile(text, `SVC_API_KEYS_FILE ${auth.apiKeysFile}`, parsed, problems);
  }
  const jwt = loadJwtKey(auth, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    configured: authenticationConfigured(config),
    protectedMode: auth.protectedMode,
    ...parsed,
    ...(jwt ? { jwt } : {}),
    verifiedBasic: new Map(),
    refusedBasic: new Map(),
  };
}
