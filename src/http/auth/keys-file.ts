// The keys file (SVC_API_KEYS_FILE) and its inline twin (SVC_API_KEYS): JSON schema, validation, entries.
import Ajv, { type ErrorObject } from 'ajv';
import type { Permission } from '../contract';
import { type Principal, TENANT_PREFIX_PATTERN, TENANT_PREFIX_RULE } from './principal';
import { PASSWORD_SCRYPT_PATTERN, type PasswordHash, parsePasswordHash, sha256 } from './secrets';

export interface KeyEntry {
  readonly digest: Buffer;
  readonly principal: Principal;
}

export interface UserEntry {
  readonly password: PasswordHash;
  readonly principal: Principal;
}

export interface KeysFile {
  readonly keys: KeyEntry[];
  readonly users: Map<string, UserEntry>;
}

const id = { type: 'string', minLength: 1, maxLength: 128 };
const permissions = {
  type: 'array',
  items: { type: 'string', enum: ['read', 'write', 'admin'] },
  uniqueItems: true,
};
// A tenant prefix is the start of a valid key, ending with a delimiter (principal.ts).
const prefix = { type: 'string', pattern: TENANT_PREFIX_PATTERN };
const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    keys: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'permissions'],
        properties: {
          id,
          key: { type: 'string', minLength: 16, maxLength: 4096 },
          key_sha256: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
          permissions,
          prefix,
        },
      },
    },
    users: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['username', 'password_scrypt', 'permissions'],
        properties: {
          id,
          username: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[^:]+$' },
          password_scrypt: { type: 'string', pattern: PASSWORD_SCRYPT_PATTERN },
          permissions,
          prefix,
        },
      },
    },
  },
};
const validate = new Ajv({ allErrors: true, strict: true }).compile(SCHEMA);

interface RawEntry {
  id: string;
  permissions: Permission[];
  prefix?: string;
}
interface RawKey extends RawEntry {
  key?: string;
  key_sha256?: string;
}
interface RawUser extends Omit<RawEntry, 'id'> {
  id?: string;
  username: string;
  password_scrypt: string;
}

const where = (e: ErrorObject) =>
  e.instancePath
    .slice(1)
    .replace(/\/(\d+)/g, '[$1]')
    .replaceAll('/', '.') || 'the document';

function describe(e: ErrorObject): string {
  if (e.keyword === 'additionalProperties')
    return `${where(e)}: unknown property '${e.params.additionalProperty}'`;
  if (e.keyword === 'enum') return `${where(e)} must be one of ${e.params.allowedValues.join(', ')}`;
  if (e.keyword === 'pattern' && e.instancePath.endsWith('key_sha256'))
    return `${where(e)} must be the 64 hex digits of the key's SHA-256 digest`;
  if (e.keyword === 'pattern' && e.instancePath.endsWith('prefix'))
    return `${where(e)} ${TENANT_PREFIX_RULE}`;
  if (e.keyword === 'pattern' && e.instancePath.endsWith('password_scrypt'))
    return `${where(e)} must be '<salt hex>:<hash hex>' as written by npm run key:new -- --basic`;
  return `${where(e)} ${e.message}`;
}

/** Parses one source of credentials; every problem is pushed (prefixed by `source`), nothing is thrown. */
export function parseKeysFile(text: string, source: string, into: KeysFile, problems: string[]): void {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    // JSON.parse quotes the text around the problem, which may be key material: say only where it is.
    const at = /position (\d+)/.exec((err as Error).message)?.[1];
    problems.push(`${source}: not valid JSON${at ? ` (at character ${at})` : ''}`);
    return;
  }
  if (!validate(data)) {
    for (const e of validate.errors ?? []) problems.push(`${source}: ${describe(e)}`);
    return;
  }
  const doc = data as { keys?: RawKey[]; users?: RawUser[] };
  const ids = new Set([...into.keys, ...into.users.values()].map((e) => e.principal.id));
  const unique = (entryId: string, at: string) => {
    if (ids.has(entryId)) problems.push(`${source}: ${at}: id '${entryId}' is used twice`);
    ids.add(entryId);
  };
  const principal = (raw: RawEntry, scheme: Principal['scheme']): Principal => ({
    id: raw.id,
    scheme,
    permissions: raw.permissions,
    ...(raw.prefix === undefined ? {} : { prefix: raw.prefix }),
  });
  doc.keys?.forEach((raw, i) => {
    unique(raw.id, `keys[${i}]`);
    if ((raw.key === undefined) === (raw.key_sha256 === undefined)) {
      problems.push(`${source}: keys[${i}] needs exactly one of 'key' and 'key_sha256'`);
      return;
    }
    const digest = raw.key === undefined ? Buffer.from(raw.key_sha256 as string, 'hex') : sha256(raw.key);
    if (into.keys.some((k) => k.digest.equals(digest)))
      problems.push(`${source}: keys[${i}] holds the same key as another entry`);
    into.keys.push({ digest, principal: principal(raw, 'api_key') });
  });
  doc.users?.forEach((raw, i) => {
    const user = { ...raw, id: raw.id ?? raw.username };
    unique(user.id, `users[${i}]`);
    if (into.users.has(raw.username))
      problems.push(`${source}: users[${i}]: username '${raw.username}' is used twice`);
    into.users.set(raw.username, {
      password: parsePasswordHash(raw.password_scrypt),
      principal: principal(user, 'basic'),
    });
  });
}
