// What a managed Redis refuses stops the start or the request with a clear answer; the engine and command table.
import Redis from 'ioredis';
import request from 'supertest';
import { identityFromInfo, probeCapabilities } from '../src/redis/capabilities';
import type { RedisClient } from '../src/redis/client';
import { CommandTable } from '../src/upstash/table';
import { bearer } from './support/auth';
import { admin, missingFieldExpiry, type ProfileServer, serviceOn, startRenamed } from './support/providers';
import { freePort } from './support/redis-server';
import { killServices, startService } from './support/service-process';

jest.setTimeout(60_000);
afterAll(killServices);

describe('what the server refuses stops the start or the request, clearly', () => {
  let server: ProfileServer;
  beforeAll(async () => {
    server = await startRenamed(['WAIT', 'MEMORY', 'XADD']);
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
      expect(found.refused.map((r) => r.command).sort()).toEqual(
        [...missingFieldExpiry(found), 'MEMORY USAGE', 'WAIT', 'XADD'].sort(),
      );
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
      '# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:9.0.1\r\nserver_mode:cluster\r\n';
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
        // The shipped table may be more cautious than an older server (a spec Redis 8 flags incomplete): never less.
        const specs = (spec: typeof ours, cautious = spec) =>
          spec?.keySpecs.map((k, i) => ({ ...k, exact: k.exact && cautious?.keySpecs[i]?.exact !== false }));
        expect([args[0], specs(ours), flags(ours)]).toEqual([args[0], specs(theirs, ours), flags(theirs)]);
      }
    } finally {
      redis.disconnect();
    }
  });
});

describe('a refused command that /upstash runs inside a bounded-read script', () => {
  let server: ProfileServer;
  beforeAll(async () => {
    server = await startRenamed(['KEYS']);
  });
  afterAll(() => server?.stop());

  test("when KEYS is renamed away, then /upstash answers Redis's own unknown-command error, not a script's", async () => {
    const service = await serviceOn(server);
    await service.connect();
    try {
      const res = await request(service.data)
        .post('/upstash')
        .set('Authorization', bearer(admin))
        .send(['KEYS', '*']);
      expect([res.status, res.body]).toEqual([400, { error: "ERR unknown command 'KEYS'" }]);
      const piped = await request(service.data)
        .post('/upstash/pipeline')
        .set('Authorization', bearer(admin))
        .send([['KEYS', '*']]);
      expect(piped.body).toEqual([{ error: "ERR unknown command 'KEYS'" }]);
    } finally {
      await service.close();
    }
  });
});
