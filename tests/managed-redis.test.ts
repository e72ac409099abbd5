// Each managed Redis provider as a profile (docs/managed-redis.md): what the probe finds, and no request answers 500.
import request from 'supertest';
import type { Service } from '../src/service';
import type { TestApp } from './support/app';
import { bearer, sampleRequest } from './support/auth';
import {
  admin,
  missingFieldExpiry,
  PROFILES,
  type Profile,
  type ProfileServer,
  serviceOn,
  startProfile,
} from './support/providers';

jest.setTimeout(60_000);

/** The probe's names of the commands a renamed command stands for. */
const PROBED: Readonly<Record<string, readonly string[]>> = {
  MEMORY: ['MEMORY USAGE'],
  OBJECT: ['OBJECT IDLETIME'],
  COMMAND: ['COMMAND', 'COMMAND GETKEYS'],
  WAIT: ['WAIT'],
  FUNCTION: ['FUNCTION LOAD'],
  FCALL: ['FCALL'],
  CONFIG: ['CONFIG GET'],
  INFO: ['INFO'],
};

/**
 * What the probe must report: the renamed commands, those the ACL rule denies (@dangerous, INFO for "app"), and
 * hash-field expiry's on an engine without it (`found`: what the probe says of the engine).
 */
function expectedUnavailable(profile: Profile, found: { engine: string; version: string | null }): string[] {
  const renamed = profile.refused.flatMap((command) => PROBED[command] ?? []);
  const denied = ['FLUSHDB', 'CONFIG GET', ...(profile.acl ? ['INFO'] : [])];
  return [...new Set([...renamed, ...denied, ...missingFieldExpiry(found)])].sort();
}

describe.each(Object.entries(PROFILES))('on the %s profile', (_name, profile) => {
  let server: ProfileServer;
  let service: Service;
  const warnings: string[] = [];
  let warn: jest.SpyInstance;
  beforeAll(async () => {
    warn = jest.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
      warnings.push(args.map(String).join(' '));
    });
    server = await startProfile(profile);
    service = await serviceOn(server, { SVC_KEY_PREFIX: 'app:' });
    await service.connect();
  });
  afterAll(async () => {
    warn.mockRestore();
    await service?.close();
    await server?.stop();
  });
  const api = () => ({
    get: (path: string) => request(service.data).get(path).set('Authorization', bearer(admin)),
    post: (path: string, body: unknown) =>
      request(service.data)
        .post(path)
        .set('Authorization', bearer(admin))
        .send(body as object),
  });

  test('when health and info are read, then they name each refused command the service uses, and why', async () => {
    let health = await api().get('/store/admin/health');
    // The Functions library loads at the connection's ready, beside the probe: wait until it is in or refused.
    for (const end = Date.now() + 10_000; health.body.server?.scripts === 'pending' && Date.now() < end; ) {
      await new Promise((r) => setTimeout(r, 50));
      health = await api().get('/store/admin/health');
    }
    expect(health.status).toBe(200);
    const { server: found } = health.body;
    // The engine under test (npm run test:engines names a Valkey through TEST_REDIS_SERVER).
    expect(found.engine).toBe(/valkey/.test(process.env.TEST_REDIS_SERVER ?? '') ? 'valkey' : 'redis');
    expect(found.cluster).toBe(profile.cluster);
    expect(found.max_arguments).toBe(profile.maxArguments ?? null);
    expect(found.functions).toBe(!profile.refused.includes('FUNCTION') && !profile.refused.includes('FCALL'));
    expect(found.scripts).toBe(found.functions ? 'functions' : 'scripts');
    const commands = (found.unavailable as { command: string; reason: string }[]).map((r) => r.command);
    expect(commands.sort()).toEqual(expectedUnavailable(profile, found));
    for (const r of found.unavailable) expect(r.reason).toMatch(/^unknown command|^denied by ACL/);
    if (profile.acl) {
      expect(health.body.memory).toBeNull();
      expect(health.body.memory_unavailable).toMatch(/refuses INFO \(denied by ACL/);
    } else expect(health.body.memory.used).toBeGreaterThan(0);
    const info = await api().get('/store/admin/info');
    expect(info.body.server).toEqual(found);
  });

  test('when strings, hashes and sets are written and read whole, then every read answers its data', async () => {
    expect((await api().post('/store/string/s1', { value: 'v' })).status).toBe(201);
    expect((await api().get('/store/string/s1')).body.value).toBe('v');
    expect((await api().post('/store/hash/h1', { fields: { f: 'x', g: 'yy' } })).status).toBe(201);
    const hash = await api().get('/store/hash/h1');
    expect([hash.status, hash.body.fields]).toEqual([200, { f: 'x', g: 'yy' }]);
    expect((await api().post('/store/set/m1', { members: ['a', 'b'] })).status).toBe(201);
    const set = await api().get('/store/set/m1');
    expect([set.status, [...set.body.members].sort()]).toEqual([200, ['a', 'b']]);
    const union = await api().post('/store/set/union', { keys: ['m1', 'm2'] });
    expect([union.status, [...union.body.union].sort()]).toEqual([200, ['a', 'b']]);
  });

  test('when a batch runs and the keys are listed, then both answer 200', async () => {
    const batch = await api().post('/store/hash/batch', {
      operations: [
        { type: 'set', key: 'b1', fields: { a: '1' } },
        { type: 'get', key: 'b1' },
      ],
    });
    expect([batch.status, batch.body.results[1].fields]).toEqual([200, { a: '1' }]);
    const keys = await api().get('/store/keys?limit=100');
    expect(keys.status).toBe(200);
    expect(keys.body.keys.map((k: { key: string }) => k.key)).toEqual(
      expect.arrayContaining(['s1', 'h1', 'b1']),
    );
  });

  test('when /upstash commands and a pipeline run, then they answer as Redis would', async () => {
    expect((await api().post('/upstash', ['SET', 'u1', 'one'])).body).toEqual({ result: 'OK' });
    expect((await api().post('/upstash', ['GET', 'u1'])).body).toEqual({ result: 'one' });
    expect((await api().post('/upstash', ['HGETALL', 'h1'])).body.result).toHaveLength(4);
    expect((await api().post('/upstash', ['SMEMBERS', 'm1'])).body.result).toHaveLength(2);
    const pipeline = await api().post('/upstash/pipeline', [
      ['INCR', 'u2'],
      ['HLEN', 'h1'],
    ]);
    expect(pipeline.body).toEqual([{ result: 1 }, { result: 2 }]);
    // The ACL user's rule denies @dangerous commands (SORT among them): Redis's own text, as Upstash answers it.
    const sort = await api().post('/upstash', ['SORT', 'm1', 'ALPHA']);
    expect([sort.status, sort.body.error]).toEqual([400, expect.stringMatching(/^NOPERM .*'sort'/)]);
  });

  test('when key memory is asked and the prefix flushed, then each answers its data or a 501 naming the command', async () => {
    const memory = await api().get('/store/admin/memory/h1');
    if (profile.refused.includes('MEMORY')) {
      expect(memory.status).toBe(501);
      expect(memory.body.error).toBe('command_refused');
      expect(memory.body.message).toContain('MEMORY USAGE');
    } else {
      expect(memory.status).toBe(200);
      expect(memory.body.last_accessed === null).toBe(profile.refused.includes('OBJECT'));
    }
    const flush = await api().post('/store/admin/flush', {});
    expect([flush.status, flush.body.keys_removed]).toEqual([200, expect.any(Number)]);
  });

  test('when every served operation gets its sample request, then none answers 500', async () => {
    const failed: string[] = [];
    for (const op of service.context.served) {
      // Flush last: it would remove what the other requests read.
      if (op.id === 'adminFlush') continue;
      const res = await sampleRequest({ data: service.data } as TestApp, op, bearer(admin));
      if (res.status >= 500 && res.status !== 501)
        failed.push(`${op.method} ${op.path}: ${res.status} ${res.text}`);
    }
    expect(service.context.served.length).toBeGreaterThan(50);
    expect(failed).toEqual([]);
  });

  test('when the connection was made, then ioredis logged no ready-check warning', () => {
    expect(warnings.filter((w) => w.includes('ready check'))).toEqual([]);
  });
});
