// What a reload changed in the credentials, by id ("API keys: 2 added, 1 changed"): never a key or a hash.
import { KeyObject } from 'node:crypto';
import type { Credentials } from './credentials';
import type { JwtKey } from './jwt';
import type { Principal } from './principal';

/** At most this many ids are named per kind of change; the count covers the rest. */
const NAMED = 5;

/** What makes an entry the same: its secret's digest (compared, never shown) and what it grants. */
const grant = (p: Principal) => `${[...p.permissions].sort().join(',')}|${p.prefix ?? ''}`;

function jwtFingerprint(jwt: JwtKey | undefined): string | undefined {
  if (!jwt) return undefined;
  const key =
    jwt.key instanceof KeyObject
      ? JSON.stringify(jwt.key.export({ format: 'jwk' }))
      : Buffer.from(jwt.key).toString('hex');
  return `${jwt.algorithms.join(',')}|${key}`;
}

function names(ids: string[]): string {
  const shown = ids.slice(0, NAMED).join(', ');
  return ids.length > NAMED ? `${shown}, +${ids.length - NAMED} more` : shown;
}

/** "2 added (a, b), 1 changed (c)" between two maps of id -> fingerprint; '' when they are the same. */
function diff(before: Map<string, string>, after: Map<string, string>): string {
  const added = [...after.keys()].filter((id) => !before.has(id));
  const changed = [...after.keys()].filter((id) => before.has(id) && before.get(id) !== after.get(id));
  const removed = [...before.keys()].filter((id) => !after.has(id));
  const parts: Array<[string[], string]> = [
    [added, 'added'],
    [changed, 'changed'],
    [removed, 'removed'],
  ];
  return parts
    .filter(([ids]) => ids.length > 0)
    .map(([ids, what]) => `${ids.length} ${what} (${names(ids)})`)
    .join(', ');
}

/** One line per kind of credential that changed, e.g. "API keys: 1 removed (ci)". */
export function credentialChanges(before: Credentials, after: Credentials): string[] {
  const keys = (c: Credentials) =>
    new Map(c.keys.map((k) => [k.principal.id, `${k.digest.toString('hex')}|${grant(k.principal)}`]));
  const users = (c: Credentials) =>
    new Map(
      [...c.users].map(([name, u]) => [
        name,
        `${u.password.salt.toString('hex')}:${u.password.hash.toString('hex')}|${u.principal.id}|${grant(u.principal)}`,
      ]),
    );
  const lines: string[] = [];
  const keyChanges = diff(keys(before), keys(after));
  if (keyChanges) lines.push(`API keys: ${keyChanges}`);
  const userChanges = diff(users(before), users(after));
  if (userChanges) lines.push(`Basic users: ${userChanges}`);
  const [jwtBefore, jwtAfter] = [jwtFingerprint(before.jwt), jwtFingerprint(after.jwt)];
  if (jwtBefore !== jwtAfter) {
    lines.push(
      `JWT key: ${jwtBefore === undefined ? 'added' : jwtAfter === undefined ? 'removed' : 'changed'}`,
    );
  }
  return lines;
}
