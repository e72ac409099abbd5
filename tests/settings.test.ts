// The settings table against everything built from it: the loader, info's fields, openapi.yaml, the README.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { publicConfig } from '../src/admin/info';
import { type Config, loadConfig, settingValue } from '../src/config';
import { SETTING_LIST, SETTINGS } from '../src/settings';
import { withSettingsTable } from './support/settings-table';

const ROOT = path.join(__dirname, '..');
const names = SETTING_LIST.map(([name]) => name);
const paths = SETTING_LIST.map(([, s]) => s.path);

// Compile-time checks (tsc runs over tests): Config is derived from the table with each setting's own type.
type Expect<T extends true> = T;
type Eq<A, B> = (<G>() => G extends A ? 1 : 2) extends <G>() => G extends B ? 1 : 2 ? true : false;
type HostPorts = ReadonlyArray<Readonly<{ host: string; port: number }>>;
type ConfigTypes = [
  Expect<Eq<Config['port'], number>>,
  Expect<Eq<Config['admin']['port'], number>>,
  Expect<Eq<Config['redis']['sentinels'], HostPorts | undefined>>,
  Expect<Eq<Config['trustProxy'], boolean | number | string>>,
  Expect<Eq<Config['log']['level'], 'debug' | 'info' | 'warn' | 'error'>>,
  Expect<Eq<Config['auth']['jwtSecret'], string | undefined>>,
  Expect<
    Eq<
      keyof Config['limits'],
      | 'maxValueBytes'
      | 'maxBodyBytes'
      | 'batchMaxOperations'
      | 'maxReplyElements'
      | 'maxReplyBytes'
      | 'listMaxWait'
    >
  >,
];

describe('the table', () => {
  test("when Config is derived from it, then each leaf has its setting's type (checked by tsc)", () => {
    const checked: ConfigTypes = [true, true, true, true, true, true, true];
    expect(checked).toHaveLength(7);
  });

  test('when read, then every setting is an SVC_* name with its own Config path, none inside another', () => {
    for (const name of names) expect(name).toMatch(/^SVC_[A-Z0-9_]+$/);
    expect(new Set(paths).size).toBe(paths.length);
    for (const p of paths) expect(paths.filter((q) => q.startsWith(`${p}.`))).toEqual([]);
  });

  test('when a setting is secret, then info has no name for it', () => {
    const secrets = SETTING_LIST.filter(([, s]) => s.secret);
    expect(secrets.map(([name]) => name)).toEqual(['SVC_REDIS_URL', 'SVC_API_KEYS', 'SVC_JWT_SECRET']);
    for (const [, s] of secrets) expect(s.info).toBeUndefined();
  });

  test('when a setting takes its default from another, then that one exists and has a default', () => {
    for (const [, s] of SETTING_LIST.filter(([, s]) => s.defaultFrom)) {
      const from = SETTING_LIST.find(([name]) => name === s.defaultFrom);
      expect(from?.[1].schema.default).toBeDefined();
    }
  });
});

describe('the loader', () => {
  test('when nothing is set, then each setting holds its default at its path, and the Config is frozen', () => {
    const config = loadConfig({});
    for (const [name, s] of SETTING_LIST) {
      const fallback = s.defaultFrom ? SETTINGS[s.defaultFrom as keyof typeof SETTINGS].schema : s.schema;
      const raw = 'default' in fallback ? fallback.default : undefined;
      const expected = s.parse ? (s.parse as (v: unknown) => unknown)(raw) : raw;
      expect([name, settingValue(config, name)]).toEqual([name, expected]);
    }
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.redis)).toBe(true);
  });

  test('when a setting is given as text, then it reaches its path with its type', () => {
    const config = loadConfig({
      SVC_REDIS_SENTINELS: 'a:1,b:2',
      SVC_TRUST_PROXY: '2',
      SVC_RATE_LIMIT_ENABLED: 'false',
    });
    expect(config.redis.sentinels).toEqual([
      { host: 'a', port: 1 },
      { host: 'b', port: 2 },
    ]);
    expect(config.trustProxy).toBe(2);
    expect(config.rateLimit.enabled).toBe(false);
    expect(config.admin.port).toBe(8080);
  });
});

describe('info', () => {
  const config = loadConfig({
    SVC_REDIS_URL: 'redis://:pw-in-url@localhost:6379',
    SVC_API_KEYS: '{"keys": []}',
    SVC_JWT_SECRET: 'a-jwt-secret-of-at-least-32-characters',
  });

  test('when shown, then it holds exactly the fields openapi.yaml lists for the info config', () => {
    const doc = parseYaml(readFileSync(path.join(ROOT, 'openapi.yaml'), 'utf8'));
    const schema = doc.components.schemas.InfoResponse.properties.config;
    const listed = [...(schema.description as string).matchAll(/`([a-z0-9_]+)`/g)].map((m) => m[1]);
    const documented = [...Object.keys(schema.properties), ...listed];
    expect(Object.keys(publicConfig(config)).sort()).toEqual(documented.sort());
  });

  test('when a secret is set, then its value appears nowhere in the public config', () => {
    const text = JSON.stringify(publicConfig(config));
    for (const secret of ['pw-in-url', '"keys"', 'a-jwt-secret']) expect(text).not.toContain(secret);
  });
});

test('when the README is read, then its configuration table is the one the settings table writes', () => {
  const file = path.join(ROOT, 'README.md');
  const readme = readFileSync(file, 'utf8');
  // `npm run readme:settings` runs this test with UPDATE_README=1 to rewrite the table.
  if (process.env.UPDATE_README === '1') writeFileSync(file, withSettingsTable(readme));
  else expect(readme).toBe(withSettingsTable(readme));
});
