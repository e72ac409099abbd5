// JWT bearer tokens: HS256 secrets, RS256/ES256 public keys, exp/iss/aud checks, permissions and prefix claims.
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { exportJWK, exportSPKI, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import request from 'supertest';
import { ConfigError, loadConfig } from '../src/config';
import { Auth } from '../src/http/auth/access';
import { type TestApp, testApp } from './support/app';
import { apiKey, bearer } from './support/auth';

const SECRET = 'a-test-secret-of-at-least-32-characters';
const dir = mkdtempSync(path.join(os.tmpdir(), 'jwt-'));
const keyFile = (name: string, text: string) => {
  const where = path.join(dir, name);
  writeFileSync(where, text);
  return where;
};

type Key = Parameters<SignJWT['sign']>[0];
interface TokenOptions {
  alg?: string;
  key?: Key;
  exp?: number | string | null;
  claims?: JWTPayload;
}
const hs = new TextEncoder().encode(SECRET);
function token({ alg = 'HS256', key = hs, exp = '5m', claims = {} }: TokenOptions = {}): Promise<string> {
  const jwt = new SignJWT({ permissions: ['read'], ...claims })
    .setProtectedHeader({ alg })
    .setSubject('alice');
  if (exp !== null) jwt.setExpirationTime(exp);
  return jwt.sign(key);
}
const probe = (t: TestApp, jwt: string, url = '/store/string/missing-key') =>
  request(t.data).get(url).set('Authorization', `Bearer ${jwt}`);
const write = (t: TestApp, jwt: string, key: string) =>
  request(t.data).post(`/store/string/${key}`).set('Authorization', `Bearer ${jwt}`).send({ value: 'v' });

describe('HS256 (SVC_JWT_SECRET)', () => {
  const ci = apiKey('ci', ['read']);
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp('jwt-hs', {
      SVC_JWT_SECRET: SECRET,
      SVC_JWT_ISSUER: 'https://issuer.test',
      SVC_JWT_AUDIENCE: 'store',
      SVC_API_KEYS: JSON.stringify({ keys: [ci] }),
    });
  });
  afterAll(() => t.close());
  const claims = (extra: JWTPayload = {}) => ({ iss: 'https://issuer.test', aud: 'store', ...extra });

  test('when the token is valid, then the request runs with its permissions', async () => {
    expect((await probe(t, await token({ claims: claims() }))).status).toBe(404);
    const res = await write(t, await token({ claims: claims() }), 'k');
    expect(res.status).toBe(403);
    expect(res.body.message).toBe("JWT subject 'alice' lacks the 'write' permission");
  });

  test('when permissions is a space-separated string (OAuth scope style), then it counts', async () => {
    const jwt = await token({ claims: claims({ permissions: 'read write' }) });
    expect((await write(t, jwt, 'scoped')).status).toBe(201);
  });

  test('when the token carries a prefix, then it is confined to it', async () => {
    const jwt = await token({ claims: claims({ permissions: ['read', 'write'], prefix: 'team-1:' }) });
    expect((await write(t, jwt, 'team-1:x')).status).toBe(201);
    const outside = await write(t, jwt, 'team-2:x');
    expect(outside.status).toBe(403);
    expect(outside.body.message).toContain("outside the prefix 'team-1:'");
  });

  test.each<[string, () => Promise<string>, RegExp]>([
    ['expired', () => token({ exp: Math.floor(Date.now() / 1000) - 60, claims: claims() }), /^JWT expired$/],
    [
      'signed with another secret',
      () => token({ key: new TextEncoder().encode('x'.repeat(40)), claims: claims() }),
      /^JWT signature is invalid$/,
    ],
    ['without exp', () => token({ exp: null, claims: claims() }), /^JWT claim 'exp' is invalid/],
    [
      'from another issuer',
      () => token({ claims: claims({ iss: 'https://evil.test' }) }),
      /^JWT claim 'iss' is invalid/,
    ],
    [
      'for another audience',
      () => token({ claims: claims({ aud: 'other' }) }),
      /^JWT claim 'aud' is invalid/,
    ],
    [
      'signed with another algorithm',
      () => token({ alg: 'HS512', claims: claims() }),
      /^JWT algorithm is not accepted \(expected HS256\)$/,
    ],
    [
      'carrying an invalid prefix',
      () => token({ claims: claims({ prefix: 'bad prefix!' }) }),
      /^JWT claim 'prefix' is not a valid/,
    ],
    ['garbage', async () => 'eyJub3QiOiJqc29uIn0.e30.c2ln', /^JWT is malformed$/],
  ])('when the token is %s, then 401 naming the cause', async (_what, make, message) => {
    const res = await probe(t, await make());
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('unauthorized');
    expect(res.body.message).toMatch(message);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="store", error="invalid_token"');
  });

  test('when an API key is configured too, then it still works', async () => {
    expect((await request(t.data).get('/store/string/x').set('Authorization', bearer(ci))).status).toBe(404);
  });
});

describe('ES256 and RS256 (SVC_JWT_PUBLIC_KEY_FILE)', () => {
  test('when the PEM key is P-256, then ES256 tokens it signed pass and others fail', async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    const other = await generateKeyPair('ES256');
    const t = await testApp('jwt-es', {
      SVC_JWT_PUBLIC_KEY_FILE: keyFile('es.pem', await exportSPKI(pair.publicKey)),
    });
    try {
      expect((await probe(t, await token({ alg: 'ES256', key: pair.privateKey }))).status).toBe(404);
      const forged = await probe(t, await token({ alg: 'ES256', key: other.privateKey }));
      expect(forged.status).toBe(401);
      expect(forged.body.message).toBe('JWT signature is invalid');
      const expired = await probe(t, await token({ alg: 'ES256', key: pair.privateKey, exp: 1 }));
      expect(expired.body.message).toBe('JWT expired');
      // An HS256 token made with the public key as a secret: the classic algorithm confusion.
      const confused = await probe(t, await token({ alg: 'HS256', key: hs }));
      expect(confused.body.message).toBe('JWT algorithm is not accepted (expected ES256)');
    } finally {
      await t.close();
    }
  });

  test('when the key is an RSA JWK, then RS256 tokens pass', async () => {
    const pair = await generateKeyPair('RS256', { extractable: true });
    const jwk = JSON.stringify(await exportJWK(pair.publicKey));
    const t = await testApp('jwt-rs', { SVC_JWT_PUBLIC_KEY_FILE: keyFile('rs.json', jwk) });
    try {
      expect((await probe(t, await token({ alg: 'RS256', key: pair.privateKey }))).status).toBe(404);
    } finally {
      await t.close();
    }
  });

  test('when the key is of another kind, then the start fails saying which kinds work', async () => {
    const pair = await generateKeyPair('EdDSA', { extractable: true });
    const config = loadConfig({
      SVC_JWT_PUBLIC_KEY_FILE: keyFile('ed.pem', await exportSPKI(pair.publicKey)),
    });
    expect(() => new Auth(config)).toThrow(ConfigError);
    expect(() => new Auth(config)).toThrow('use an RSA (RS256) or P-256 EC (ES256) public key');
  });
});
