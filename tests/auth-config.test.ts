// Setting up authentication: protected mode, the keys file (digests, key:new, validation), live reload.
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createApp } from '../src/app';
import { type Config, ConfigError, loadConfig } from '../src/config';
import { authenticationConfigured } from '../src/http/auth/credentials';
import { createLogger } from '../src/observability/logger';
import { createRedis } from '../src/redis/client';
import { contract, type TestApp, testApp } from './support/app';
import { apiKey, basicAuth, bearer, keyNew } from './support/auth';

const dir = mkdtempSync(path.join(os.tmpdir(), 'auth-config-'));
/** An app that is never served (its clients never connect): only its start-up checks run. */
const build = (config: Config) => {
  const redis = createRedis(config);
  return createApp({
    config,
    redis,
    limiterRedis: redis,
    logger: createLogger(config.log, true),
    contract: contract(),
  });
};
const file = (name: string, content: unknown) => {
  const where = path.join(dir, name);
  writeFileSync(where, typeof content === 'string' ? content : JSON.stringify(content));
  return where;
};
const probe = (t: TestApp, authorization?: string, from?: string) => {
  const req = request(t.data).get('/store/string/missing-key');
  if (authorization) req.set('Authorization', authorization);
  return from ? req.set('X-Forwarded-For', from) : req;
};

describe('protected mode (no credential configured)', () => {
  let t: TestApp;
  beforeAll(async () => {
    // SVC_TRUST_PROXY lets the test pose as another client through X-Forwarded-For.
    t = await testApp('protected', { SVC_PROTECTED_MODE: 'true', SVC_TRUST_PROXY: 'true' });
  });
  afterAll(() => t.close());

  test('when the client is on loopback, then it is served with every permission', async () => {
    expect((await probe(t)).status).toBe(404);
    expect((await probe(t, undefined, '127.0.0.1')).status).toBe(404);
    expect((await probe(t, undefined, '::1')).status).toBe(404);
  });

  test('when the client is elsewhere, then 403 saying how to configure keys or turn protected mode off', async () => {
    const res = await probe(t, undefined, '203.0.113.7');
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
    expect(res.body.message).toContain('SVC_API_KEYS_FILE');
    expect(res.body.message).toContain('SVC_PROTECTED_MODE=false');
  });

  test('when SVC_PROTECTED_MODE=false, then every client is served', async () => {
    const open = await testApp('open', { SVC_PROTECTED_MODE: 'false', SVC_TRUST_PROXY: 'true' });
    try {
      expect((await probe(open, undefined, '203.0.113.7')).status).toBe(404);
    } finally {
      await open.close();
    }
  });

  test('when credentials are configured, then a remote client with a good key is served', async () => {
    const key = apiKey('remote', ['read']);
    const keyed = await testApp('keyed', {
      SVC_PROTECTED_MODE: 'true',
      SVC_TRUST_PROXY: 'true',
      SVC_API_KEYS: JSON.stringify({ keys: [key] }),
    });
    try {
      expect((await probe(keyed, bearer(key), '203.0.113.7')).status).toBe(404);
      expect((await probe(keyed, undefined, '127.0.0.1')).status).toBe(401);
    } finally {
      await keyed.close();
    }
  });
});

describe('the keys file', () => {
  test('when it holds entries made by key:new (digest only), then their key and password work', async () => {
    const made = keyNew(['--id', 'ci', '--permissions', 'read,write', '--prefix', 'ci:']);
    const user = keyNew(['--basic', '--username', 'bob', '--password', 'pw-of-bob', '--permissions', 'read']);
    expect(made.entry).not.toHaveProperty('key');
    expect(JSON.stringify(user.entry)).not.toContain('pw-of-bob');
    const t = await testApp('keys-file', {
      SVC_API_KEYS_FILE: file('made.json', { keys: [made.entry], users: [user.entry] }),
    });
    try {
      expect(
        (await request(t.data).get('/store/string/ci:x').set('Authorization', `Bearer ${made.secret}`))
          .status,
      ).toBe(404);
      expect(
        (await request(t.data).get('/store/string/x').set('Authorization', `Bearer ${made.secret}`)).status,
      ).toBe(403);
      expect((await probe(t, basicAuth('bob', 'pw-of-bob'))).status).toBe(404);
      expect((await probe(t, basicAuth('bob', 'not-it'))).status).toBe(401);
    } finally {
      await t.close();
    }
  });

  test('when it has problems, then the start fails listing every one', () => {
    const bad = file('bad.json', {
      keys: [
        { id: 'a', key: 'short', permissions: ['read', 'root'] },
        { id: 'a', key: 'long-enough-key-0123', key_sha256: 'ab', permissions: [] },
        { permissions: ['read'], key: 'another-long-key-0123', colour: 'blue' },
      ],
      users: [{ username: 'u', password_scrypt: 'plaintext', permissions: ['read'] }],
    });
    const config = loadConfig({ SVC_API_KEYS_FILE: bad, SVC_API_KEYS: '{"keys": [' });
    let error: unknown;
    try {
      build(config);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const expected of [
      'SVC_API_KEYS: not valid JSON',
      'keys[0].key must NOT have fewer than 16 characters',
      'keys[0].permissions[1] must be one of read, write, admin',
      'keys[1].key_sha256 must be the 64 hex digits',
      "keys[2] must have required property 'id'",
      "keys[2]: unknown property 'colour'",
      "users[0].password_scrypt must be '<salt hex>:<hash hex>'",
    ]) {
      expect(problems).toContain(expected);
    }
  });

  test('when entries clash, then each clash is a problem', () => {
    const clash = file('clash.json', {
      keys: [
        { id: 'a', key: 'same-key-0123456789', permissions: ['read'] },
        { id: 'a', key: 'same-key-0123456789', key_sha256: 'a'.repeat(64), permissions: ['read'] },
        { id: 'b', key: 'same-key-0123456789', permissions: ['read'] },
      ],
    });
    const config = loadConfig({ SVC_API_KEYS_FILE: clash });
    const problems = () => build(config);
    expect(problems).toThrow("keys[1]: id 'a' is used twice");
    expect(problems).toThrow("keys[1] needs exactly one of 'key' and 'key_sha256'");
    expect(problems).toThrow('keys[2] holds the same key as another entry');
  });

  test('when it cannot be read, then the start fails naming it', () => {
    const config = loadConfig({ SVC_API_KEYS_FILE: path.join(dir, 'nope.json') });
    expect(() => build(config)).toThrow(/SVC_API_KEYS_FILE: cannot read .*nope\.json/);
  });
});

describe('reloading credentials', () => {
  const first = apiKey('first', ['read', 'admin']);
  const second = apiKey('second', ['read', 'admin']);
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp('reload', { SVC_API_KEYS_FILE: file('live.json', { keys: [first] }) });
  });
  afterAll(() => t.close());
  const reload = (key: { key: string }) =>
    request(t.data)
      .post('/store/admin/reload')
      .set('Content-Type', 'application/json')
      .set('Authorization', bearer(key));

  test('when the file changes and reload runs, then the new keys apply without a restart, and it says so', async () => {
    expect((await probe(t, bearer(first))).status).toBe(404);
    file('live.json', { keys: [second] });
    const res = await reload(first);
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Configuration reloaded; API keys: 1 added (second), 1 removed (first)');
    expect((await probe(t, bearer(first))).status).toBe(401);
    expect((await probe(t, bearer(second))).status).toBe(404);
  });

  test('when a key is removed, changed or added, then the reload names each change by id, never a secret', async () => {
    const ops = apiKey('ops', ['read']);
    const ci = apiKey('ci', ['read']);
    file('live.json', { keys: [second, ops, ci] });
    expect((await reload(second)).body.message).toBe('Configuration reloaded; API keys: 2 added (ops, ci)');
    file('live.json', { keys: [second, { ...ops, permissions: ['read', 'write'] }] });
    const res = await reload(second);
    expect(res.body.message).toBe('Configuration reloaded; API keys: 1 changed (ops), 1 removed (ci)');
    expect(res.body.message).not.toContain(ops.key);
    expect((await probe(t, bearer(ci))).status).toBe(401);
    file('live.json', { keys: [second] });
    expect((await reload(second)).body.message).toBe('Configuration reloaded; API keys: 1 removed (ops)');
    expect((await reload(second)).body.message).toBe('Configuration reloaded; nothing changed');
  });

  test('when a Basic user is added, then the reload says so', async () => {
    const { entry } = keyNew(['--basic', '--username', 'alice', '--permissions', 'read', '--password', 'pw']);
    file('live.json', { keys: [second], users: [entry] });
    expect((await reload(second)).body.message).toBe('Configuration reloaded; Basic users: 1 added (alice)');
    file('live.json', { keys: [second] });
    expect((await reload(second)).body.message).toBe(
      'Configuration reloaded; Basic users: 1 removed (alice)',
    );
  });

  test('when the new file is broken, then the reload fails listing the problem, logs a warning (no stack), and the current keys stay', async () => {
    const warn = jest.spyOn(t.context.logger, 'warn');
    const error = jest.spyOn(t.context.logger, 'error');
    try {
      file('live.json', '{"keys": [{"id": "x"}]}');
      const res = await reload(second);
      expect(res.status).toBe(500);
      expect(res.body.message).toContain("keys[0] must have required property 'permissions'");
      expect((await probe(t, bearer(second))).status).toBe(404);
      expect(warn).toHaveBeenCalledWith('configuration not reloaded; the running configuration stays', {
        problems: [expect.stringContaining("keys[0] must have required property 'permissions'")],
      });
      // The request's own line is a warning too, with the reason as its cause, not an error with a stack.
      expect(warn).toHaveBeenCalledWith(
        'request',
        expect.objectContaining({ status: 500, cause: expect.stringMatching(/^Configuration not reloaded/) }),
      );
      expect(error).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
      error.mockRestore();
    }
  });

  test('when SIGHUP-style reload (ctx.reload) runs, then it re-reads the file too', async () => {
    file('live.json', { keys: [first] });
    await expect(t.context.reload()).resolves.toContain('API keys: 1 added (first), 1 removed (second)');
    expect((await probe(t, bearer(first))).status).toBe(404);
    expect((await probe(t, bearer(second))).status).toBe(401);
  });
});

describe('features.authentication', () => {
  test.each([
    [{}, false],
    [{ SVC_API_KEYS: '{"keys": []}' }, true],
    [{ SVC_API_KEYS_FILE: '/etc/keys.json' }, true],
    [{ SVC_JWT_SECRET: 'x'.repeat(32) }, true],
  ])('with %j, it is %s', (env, expected) => {
    expect(authenticationConfigured(loadConfig(env))).toBe(expected);
  });
});
