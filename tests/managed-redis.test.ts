// Each managed Redis provider as a profile (docs/managed-redis.md): what the probe finds, and no request answers 500.

import Redis from 'ioredis';
import request from 'supertest';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/observability/logger';
import { identityFromInfo, probeCapabilities } from '../src/redis/capabilities';
import type { RedisClient } from '../src/redis/client';
import { createService, type Service } from '../src/service';
import { CommandTable } from '../src/upstash/table';
import { contract, type TestApp } from './support/app';
import { apiKey, bearer, sampleRequest } from './support/auth';
import { PROFILES, type Profile, type ProfileServer, startProfile } from './support/providers';
import { freePort } from './support/redis-server';
import { killServices, startService } from './support/service-process';
import { recordStatuses } from './support/statuses';

jest.setTimeout(60_000);
afterAll(killServices);

const admin = apiKey('managed-admin', ['read', 'write', 'admin']);

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

/** What the probe must report: the renamed commands, and those the ACL rule denies (@dangerous, INFO for "app"). */
function expectedUnavailable(profile: Profile): string[] {
  const renamed = profile.refused.flatMap((command) => PROBED[command] ?? []);
  const denied = ['FLUSHDB', 'CONFIG GET', ...(profile.acl ? ['INFO'] : [])];
  return [...new Set([...renamed, ...denied])].sort();
}

async function serviceOn(server: ProfileServer, env: Record<string, string> = {}): Promise<Service> {
  const config = loadConfig({
    ...server.env,
    SVC_RATE_LIMIT_ENABLED: 'false',
    SVC_API_KEYS: JSON.stringify({ keys: [admin] }),
    ...env,
  });
  const service = createService(config, { logger: createLogger(config.log, true), contract: contract() });
  recordStatuses(service.data);
  return service;
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
    const health = await api().get('/store/admin/health');
    expect(health.status).toBe(200);
    const { server: found } = health.body;
    expect(found.engine).toBe('redis');
    expect(found.cluster).toBe(profile.cluster);
    expect(found.max_arguments).toBe(profile.maxArguments ?? null);
    expect(found.functions).toBe(!profile.refused.includes('FUNCTION') && !profile.refused.includes('FCALL'));
    const commands = (found.unavailable as { command: string; reason: string }[]).map((r) => r.command);
    expect(commands.sort()).toEqual(expectedUnavailable(profile));
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

describe('what the server refuses stops the start or the request, clearly', () => {
  let server: ProfileServer;
  beforeAll(async () => {
    server = await startProfile({ ...(PROFILES['acl-app'] as Profile), refused: ['WAIT', 'MEMORY', 'XADD'] });
  });
  afterAll(() => server?.stop());

  test('when SVC_REDIS_WAIT_REPLICAS is set and WAIT is refused, then the start fails naming the setting', async () => {
    const service = await serviceOn(server, { SVC_REDIS_WAIT_REPLICAS: '1' });
    try {
      await expect(service.connect()).rejects.toThrow(
        /SVC_REDIS_WAIT_REPLICAS=1 needs WAIT, which the server refuses/,
      );
    } finally {
      await service.close();
    }
  });

  test('when the process starts, then it logs the capabilities once, or stops with exit 2 when WAIT is refused', async () => {
    const env = { ...server.env, SVC_PORT: String(await freePort()), SVC_LOG_FORMAT: 'json' };
    const refused = startService({ ...env, SVC_REDIS_WAIT_REPLICAS: '1' });
    expect((await refused.exited).code).toBe(2);
    expect(refused.stderr()).toContain('SVC_REDIS_WAIT_REPLICAS=1 needs WAIT, which the server refuses');
    expect(refused.output()).not.toMatch(/\n\s+at /);
    const svc = startService(env);
    for (const end = Date.now() + 20_000; Date.now() < end && !svc.output().includes('"listening"'); )
      await new Promise((resolve) => setTimeout(resolve, 100));
    const lines = svc
      .output()
      .split('\n')
      .filter((line) => line.includes('redis capabilities'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string).refused).toEqual(
      expect.arrayContaining([expect.stringMatching(/^WAIT: /)]),
    );
    expect(svc.output()).not.toContain('ready check');
    await killServices();
  });

  test('when the change feed is on and XADD is refused, then the start fails naming the setting', async () => {
    const service = await serviceOn(server, { SVC_CHANGES_ENABLED: 'true' });
    try {
      await expect(service.connect()).rejects.toThrow(
        /SVC_CHANGES_ENABLED needs XADD, which the server refuses/,
      );
    } finally {
      await service.close();
    }
  });

  test('when the whole database is flushed and FLUSHDB is denied, then 501 names it and nothing is removed', async () => {
    const service = await serviceOn(server);
    await service.connect();
    try {
      await request(service.data)
        .post('/store/string/kept')
        .set('Authorization', bearer(admin))
        .send({ value: 'v' });
      const flush = await request(service.data)
        .post('/store/admin/flush')
        .set('Authorization', bearer(admin));
      expect([flush.status, flush.body.error]).toEqual([501, 'command_refused']);
      expect(flush.body.message).toContain('FLUSHDB');
      const kept = await request(service.data).get('/store/string/kept').set('Authorization', bearer(admin));
      expect(kept.status).toBe(200);
    } finally {
      await service.close();
    }
  });

  test('when a write needs more arguments than SVC_REDIS_MAX_ARGUMENTS, then 400 names the setting', async () => {
    const service = await serviceOn(server, { SVC_REDIS_MAX_ARGUMENTS: '3999' });
    await service.connect();
    try {
      const fields = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`f${i}`, 'v']));
      const res = await request(service.data)
        .post('/store/hash/wide')
        .set('Authorization', bearer(admin))
        .send({ fields });
      expect([res.status, res.body.error]).toEqual([400, 'invalid_request']);
      expect(res.body.message).toContain('SVC_REDIS_MAX_ARGUMENTS');
      const small = await request(service.data)
        .post('/store/hash/narrow')
        .set('Authorization', bearer(admin))
        .send({ fields: { a: '1' } });
      expect(small.status).toBe(201);
      // /upstash: a pipeline's commands go on their own, each within the cap; one longer command refuses the request.
      const words = Array.from({ length: 2000 }, (_, i) => [`k${i}`, 'v']).flat();
      const upstash = (path: string, body: unknown) =>
        request(service.data)
          .post(path)
          .set('Authorization', bearer(admin))
          .send(body as object);
      const long = await upstash('/upstash/pipeline', [
        ['SET', 'p', '1'],
        ['MSET', ...words],
      ]);
      expect([long.status, long.body.error]).toEqual([
        400,
        expect.stringContaining('SVC_REDIS_MAX_ARGUMENTS'),
      ]);
      expect((await upstash('/upstash', ['EXISTS', 'p'])).body).toEqual({ result: 0 });
      const split = await upstash('/upstash/pipeline', [
        ['MSET', ...words.slice(0, 2000)],
        ['MSET', ...words.slice(2000)],
      ]);
      expect(split.body).toEqual([{ result: 'OK' }, { result: 'OK' }]);
    } finally {
      await service.close();
    }
  });

  test('when reads pass the reply bytes without MEMORY USAGE, then 413, and /upstash answers the same', async () => {
    const service = await serviceOn(server, { SVC_MAX_REPLY_BYTES: '4096', SVC_KEY_PREFIX: 'big:' });
    await service.connect();
    const send = (path: string, body?: unknown) =>
      request(service.data)
        .post(path)
        .set('Authorization', bearer(admin))
        .send(body as object);
    try {
      const fields = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`f${i}`, 'x'.repeat(1000)]));
      expect((await send('/store/hash/wide', { fields })).status).toBe(201);
      expect(
        (await send('/store/set/wide-set', { members: Object.values(fields).map((v, i) => v + i) })).status,
      ).toBe(201);
      for (const path of ['hash/wide', 'set/wide-set']) {
        const res = await request(service.data).get(`/store/${path}`).set('Authorization', bearer(admin));
        expect([res.status, res.body.error]).toEqual([413, 'reply_too_large']);
      }
      for (const command of [
        ['HGETALL', 'wide'],
        ['SMEMBERS', 'wide-set'],
        ['HVALS', 'wide'],
      ]) {
        const res = await send('/upstash', command);
        expect([res.status, res.body.error]).toEqual([413, expect.any(String)]);
      }
      expect((await send('/upstash', ['HLEN', 'wide'])).body).toEqual({ result: 8 });
    } finally {
      await service.close();
    }
  });

  test('when the probe runs with every right, then it finds FLUSHDB allowed and removes nothing', async () => {
    const full = new Redis(server.adminUrl);
    try {
      await full.set('probe-kept', '1');
      const found = await probeCapabilities(full as RedisClient, null);
      expect(found.refused.map((r) => r.command).sort()).toEqual(['MEMORY USAGE', 'WAIT', 'XADD']);
      expect(await full.get('probe-kept')).toBe('1');
      expect(await full.dbsize()).toBeGreaterThan(0);
    } finally {
      full.disconnect();
    }
  });

  test('when the server restarts, then the capabilities are probed again', async () => {
    const service = await serviceOn(server);
    await service.connect();
    const health = () => request(service.data).get('/store/admin/health').set('Authorization', bearer(admin));
    try {
      const before = (await health()).body.server.probed_at;
      await server.restart();
      for (const end = Date.now() + 20_000; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
        const now = await health();
        if (now.status === 200 && now.body.server.probed_at !== before) break;
      }
      const after = await health();
      expect(after.body.server.probed_at).not.toBe(before);
      expect(after.body.server.unavailable.map((r: { command: string }) => r.command)).toContain('WAIT');
    } finally {
      await service.close();
    }
  });
});

describe('the engine is read from what the server says of itself', () => {
  test("when INFO is Valkey's, then the engine is valkey with valkey_version, not redis_version 7.2.4", () => {
    const info =
      '# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:9.0.1\r\nredis_mode:cluster\r\n';
    expect(identityFromInfo(info)).toEqual({ engine: 'valkey', version: '9.0.1', cluster: true });
    expect(identityFromInfo('redis_version:7.0.15\r\nredis_mode:standalone\r\n')).toEqual({
      engine: 'redis',
      version: '7.0.15',
      cluster: false,
    });
  });
});

describe('the command table shipped with the service', () => {
  test("when compared with the test server's COMMAND, then every command is known with the same key specs and write/admin flags", async () => {
    const redis = new Redis(process.env.REDIS_URL as string);
    try {
      const live = CommandTable.fromReply(await redis.call('COMMAND'));
      const shipped = CommandTable.shipped();
      const names = ((await redis.call('COMMAND', 'LIST')) as string[]).map((name) => [name]);
      expect(names.length).toBeGreaterThan(200);
      // A newer server's commands the shipped table lacks come from its COMMAND.
      const merged = await CommandTable.load(redis as unknown as RedisClient);
      for (const args of names) {
        const [ours, theirs] = [shipped.find(args) ?? merged.find(args), live.find(args)];
        const flags = (spec?: typeof ours) => ['write', 'admin'].filter((f) => spec?.flags.has(f));
        expect([args[0], ours?.keySpecs, flags(ours)]).toEqual([args[0], theirs?.keySpecs, flags(theirs)]);
      }
    } finally {
      redis.disconnect();
    }
  });
});
