#!/usr/bin/env node
// npm run key:new: prints a new API key (or Basic password) once, and the keys-file entry that holds only its digest.
//
//   npm run key:new -- --id ci --permissions read,write [--prefix tenant-a:]
//   npm run key:new -- --basic --username alice --permissions read [--password secret] [--id alice] [--prefix p:]
//
// The password format must match src/http/auth/secrets.ts (scrypt N=16384 r=8 p=1, 64 bytes, '<salt>:<hash>').
import { createHash, randomBytes, scryptSync } from 'node:crypto';
import { parseArgs } from 'node:util';

const USAGE = `usage: npm run key:new -- --id <id> --permissions read,write,admin [--prefix <key prefix>]
       npm run key:new -- --basic --username <name> --permissions ... [--password <pw>] [--id <id>] [--prefix ...]`;
const PERMISSIONS = ['read', 'write', 'admin'];

function fail(message) {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      id: { type: 'string' },
      permissions: { type: 'string' },
      prefix: { type: 'string' },
      basic: { type: 'boolean', default: false },
      username: { type: 'string' },
      password: { type: 'string' },
    },
  }));
} catch (err) {
  fail(err.message);
}

const permissions = (values.permissions ?? '').split(',').filter(Boolean);
if (permissions.length === 0) fail('--permissions is required (comma-separated: read, write, admin)');
const unknown = permissions.filter((p) => !PERMISSIONS.includes(p));
if (unknown.length > 0) fail(`unknown permission(s): ${unknown.join(', ')}; use read, write, admin`);
if (values.prefix !== undefined && !/^[A-Za-z0-9_.:-]{1,1024}$/.test(values.prefix))
  fail('--prefix must be 1 to 1024 characters of A-Z a-z 0-9 _ . : -');
const scope = { permissions: [...new Set(permissions)], ...(values.prefix ? { prefix: values.prefix } : {}) };

if (values.basic) {
  if (!values.username || values.username.includes(':')) fail('--username is required (no colon)');
  const password = values.password ?? randomBytes(18).toString('base64url');
  const salt = randomBytes(16);
  const hash = scryptSync(password, salt, 64, { N: 16384, r: 8, p: 1 });
  const entry = {
    ...(values.id ? { id: values.id } : {}),
    username: values.username,
    password_scrypt: `${salt.toString('hex')}:${hash.toString('hex')}`,
    ...scope,
  };
  if (!values.password) process.stdout.write(`Password (shown once, keep it now): ${password}\n`);
  process.stdout.write(`Add to "users" in the keys file:\n${JSON.stringify(entry)}\n`);
} else {
  if (!values.id) fail('--id is required');
  // No dot in a key, so it is never mistaken for a JWT.
  const key = `svc_${randomBytes(32).toString('base64url')}`;
  const digest = createHash('sha256').update(key).digest('hex');
  const entry = { id: values.id, key_sha256: digest, ...scope };
  process.stdout.write(`API key (shown once, keep it now): ${key}\n`);
  process.stdout.write(`Add to "keys" in the keys file:\n${JSON.stringify(entry)}\n`);
}
