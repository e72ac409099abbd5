// TLS to Redis on every topology, with a CA the test makes: server-only and mutual TLS work; a certificate problem
// stops the start with its reason, fast.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis, { type Cluster } from 'ioredis';
import request from 'supertest';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/observability/logger';
import { createRedis } from '../src/redis/client';
import { connectOrTlsFailure } from '../src/redis/tls';
import { createService } from '../src/service';
import { type TestApp, testApp } from './support/app';
import { type RedisCluster, startRedisCluster } from './support/redis-cluster';
import { type SentinelSet, startSentinelSet } from './support/redis-sentinel';
import { type RedisServer, startRedisServer } from './support/redis-server';
import { killServices, startService } from './support/service-process';
import { clientTls, makePki, type Pki } from './support/tls';

let pki: Pki;
beforeAll(() => {
  pki = makePki(mkdtempSync(path.join(process.env.TEST_REDIS_TMPDIR ?? os.tmpdir(), 'pki-')));
});
afterAll(killServices);

/** The settings of a client that trusts the test CA and shows the test client certificate. */
const mutual = (url: string, more: Record<string, string> = {}) => ({
  SVC_REDIS_URL: url,
  SVC_REDIS_TLS_CA_FILE: pki.ca,
  SVC_REDIS_TLS_CERT_FILE: pki.clientCert,
  SVC_REDIS_TLS_KEY_FILE: pki.clientKey,
  ...more,
});

/** Connects a service with these settings: 'connected', or the message it failed with. Closes it either way. */
async function connectOutcome(env: Record<string, string>): Promise<string> {
  const config = loadConfig({ SVC_PROTECTED_MODE: 'false', SVC_REDIS_CONNECT_TIMEOUT_MS: '5000', ...env });
  const service = createService(config, { logger: createLogger(config.log, true) });
  try {
    await service.connect();
    return 'connected';
  } catch (err) {
    return (err as Error).message;
  } finally {
    await service.close();
  }
}

/** A string written through the service and read back. */
async function roundTrip(t: TestApp, key: string): Promise<void> {
  await request(t.data)
    .post(`/store/string/${key}`)
    .send({ value: `v-${key}` })
    .expect(201);
  expect((await request(t.data).get(`/store/string/${key}`).expect(200)).body.value).toBe(`v-${key}`);
}

describe('a standalone Redis that serves TLS only', () => {
  let mtls: RedisServer;
  let serverOnly: RedisServer;
  let expired: RedisServer;

  beforeAll(async () => {
    [mtls, serverOnly, expired] = await Promise.all([
      startRedisServer({ tls: { pki } }),
      startRedisServer({ tls: { pki, authClients: false } }),
      startRedisServer({ tls: { pki, expired: true, authClients: false } }),
    ]);
  }, 60_000);
  afterAll(() => Promise.all([mtls, serverOnly, expired].map((s) => s?.stop())));

  test('when the service shows a client certificate the server trusts (mutual TLS), then data round-trips', async () => {
    expect(mtls.url).toMatch(/^rediss:/);
    const t = await testApp('tls-mutual', mutual(mtls.url));
    try {
      await roundTrip(t, 'a');
    } finally {
      await t.close();
    }
  });

  test('when the server asks for no client certificate, then the CA file alone is enough', async () => {
    const t = await testApp('tls-server', { SVC_REDIS_URL: serverOnly.url, SVC_REDIS_TLS_CA_FILE: pki.ca });
    try {
      await roundTrip(t, 'b');
    } finally {
      await t.close();
    }
  });

  test('when the server name is set to a name the certificate holds, then it connects by address', async () => {
    const env = mutual(mtls.url, { SVC_REDIS_TLS_SERVER_NAME: 'localhost' });
    await expect(connectOutcome(env)).resolves.toBe('connected');
  });

  test('when the service shows no client certificate to a server that wants one, then the start fails saying so', async () => {
    const outcome = await connectOutcome({ SVC_REDIS_URL: mtls.url, SVC_REDIS_TLS_CA_FILE: pki.ca });
    expect(outcome).toMatch(
      `TLS to Redis at 127.0.0.1:${mtls.port} failed: the server refused this client's`,
    );
    expect(outcome).toContain('SVC_REDIS_TLS_CERT_FILE');
  });

  test('when the client certificate comes from another CA, then the server refuses it and the start fails', async () => {
    const env = mutual(mtls.url, {
      SVC_REDIS_TLS_CERT_FILE: pki.foreignCert,
      SVC_REDIS_TLS_KEY_FILE: pki.foreignKey,
    });
    await expect(connectOutcome(env)).resolves.toMatch(/the server refused this client's certificate/);
  });

  test("when the server's certificate has expired, then the start fails saying so", async () => {
    const outcome = await connectOutcome({ SVC_REDIS_URL: expired.url, SVC_REDIS_TLS_CA_FILE: pki.ca });
    expect(outcome).toMatch(/the server's certificate has expired: renew it \(CERT_HAS_EXPIRED/);
  });

  test('when the certificate does not hold the server name, then the start fails naming the setting', async () => {
    const outcome = await connectOutcome(mutual(mtls.url, { SVC_REDIS_TLS_SERVER_NAME: 'wrong.example' }));
    expect(outcome).toMatch(/does not hold the name connected to: set SVC_REDIS_TLS_SERVER_NAME/);
    expect(outcome).toContain('ERR_TLS_CERT_ALTNAME_INVALID');
  });

  test('when no CA file is given, then the test CA is not trusted and the start says which setting to set', async () => {
    const outcome = await connectOutcome({ SVC_REDIS_URL: serverOnly.url });
    expect(outcome).toMatch(/not signed by a trusted CA: set SVC_REDIS_TLS_CA_FILE/);
  });

  test('when a data connection fails TLS while connecting (past the seed check), then connect rejects saying why', async () => {
    const config = loadConfig({ SVC_REDIS_URL: expired.url, SVC_REDIS_TLS_CA_FILE: pki.ca });
    const redis = createRedis(config);
    redis.on('error', () => {});
    try {
      await expect(connectOrTlsFailure(redis, config)).rejects.toThrow(/certificate has expired/);
      // No retry loop: the client ends.
      if (redis.status !== 'end') await new Promise((resolve) => redis.once('end', resolve));
    } finally {
      redis.disconnect();
    }
  });

  test('when the service process starts with an expired server certificate, then it exits 1 with the reason', async () => {
    const svc = startService({ SVC_PORT: '0', SVC_REDIS_URL: expired.url, SVC_REDIS_TLS_CA_FILE: pki.ca });
    const { code } = await svc.exited;
    expect(code).toBe(1);
    expect(svc.stderr()).toContain(
      `failed to start: TLS to Redis at 127.0.0.1:${expired.port} failed: the server's certificate has expired`,
    );
  });
});

describe('the TLS settings', () => {
  test('when a TLS setting is given with a redis:// URL, then the configuration is refused', () => {
    expect(() => loadConfig({ SVC_REDIS_TLS_CA_FILE: '/ca.pem' })).toThrow(
      'SVC_REDIS_TLS_CA_FILE is set but SVC_REDIS_URL is not rediss://',
    );
  });

  test('when a client certificate comes without its key, then the configuration is refused', () => {
    expect(() =>
      loadConfig({ SVC_REDIS_URL: 'rediss://127.0.0.1:1', SVC_REDIS_TLS_CERT_FILE: '/c.pem' }),
    ).toThrow('SVC_REDIS_TLS_CERT_FILE and SVC_REDIS_TLS_KEY_FILE go together');
  });

  test('when the CA file does not exist, then creating the service fails naming it', () => {
    const config = loadConfig({
      SVC_REDIS_URL: 'rediss://127.0.0.1:1',
      SVC_REDIS_TLS_CA_FILE: '/nonexistent.pem',
    });
    expect(() => createService(config, { logger: createLogger(config.log, true) })).toThrow(
      'SVC_REDIS_TLS_CA_FILE /nonexistent.pem: no such file',
    );
  });
});

describe('a Sentinel set on TLS only (Sentinels, master and replica; replication over TLS)', () => {
  let set: SentinelSet;
  let t: TestApp;
  beforeAll(async () => {
    set = await startSentinelSet('gwtls', { tls: { pki } });
    t = await testApp(
      'tls-sentinel',
      mutual('rediss://', {
        SVC_REDIS_SENTINELS: set.sentinels,
        SVC_REDIS_SENTINEL_NAME: set.name,
      }),
    );
  }, 90_000);
  afterAll(async () => {
    await t?.close();
    await set?.stop();
  });

  test('when the service reaches the master through the Sentinels, then data round-trips', async () => {
    await roundTrip(t, 'before');
  });

  test('when the service runs, then its failover fence listens on every Sentinel over TLS', async () => {
    const sentinel = new Redis({
      host: '127.0.0.1',
      port: set.sentinelServers[0]?.port,
      tls: clientTls(pki),
    });
    try {
      // The fence subscribes to +try-failover and +switch-master, and to -failover-abort-* by pattern.
      const listening = async () => /sub=2 psub=1/.test((await sentinel.call('CLIENT', 'LIST')) as string);
      const deadline = Date.now() + 10_000;
      while (!(await listening()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(await listening()).toBe(true);
    } finally {
      sentinel.disconnect();
    }
  });

  test('when the Sentinels fail over, then the service writes to the new master over TLS', async () => {
    await set.failover();
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await request(t.data).post('/store/string/after').send({ value: 'v-after' });
      if (res.status === 201 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect((await request(t.data).get('/store/string/after').expect(200)).body.value).toBe('v-after');
  }, 60_000);

  test('when the certificate does not hold the server name, then the start fails at the Sentinels', async () => {
    const outcome = await connectOutcome(
      mutual('rediss://', {
        SVC_REDIS_SENTINELS: set.sentinels,
        SVC_REDIS_SENTINEL_NAME: set.name,
        SVC_REDIS_TLS_SERVER_NAME: 'wrong.example',
      }),
    );
    expect(outcome).toMatch(
      /^TLS to Redis at 127\.0\.0\.1:\d+ failed: the server's certificate does not hold/,
    );
  });
});

describe('a Redis Cluster on TLS only (bus included) whose nodes announce a host name', () => {
  let cluster: RedisCluster;
  let t: TestApp;
  beforeAll(async () => {
    cluster = await startRedisCluster(3, { tls: { pki }, hostname: 'localhost' });
    t = await testApp('tls-cluster', mutual('rediss://', { SVC_REDIS_CLUSTER_NODES: cluster.nodes }));
  }, 90_000);
  afterAll(async () => {
    await t?.close();
    await cluster?.stop();
  });

  test('when keys fall in every node, then each round-trips over TLS to the node by its name', async () => {
    expect(cluster.nodes).toMatch(/^localhost:\d+,/);
    for (const key of ['alpha', 'beta', 'gamma', 'delta', 'epsilon']) await roundTrip(t, key);
    const hosts = new Set((t.redis as Cluster).nodes('master').map((n) => n.options.host));
    expect([...hosts]).toEqual(['localhost']);
  });

  test('when the client certificate is missing, then the start fails at the seed nodes', async () => {
    const outcome = await connectOutcome({
      SVC_REDIS_URL: 'rediss://',
      SVC_REDIS_TLS_CA_FILE: pki.ca,
      SVC_REDIS_CLUSTER_NODES: cluster.nodes,
    });
    expect(outcome).toMatch(/^TLS to Redis at localhost:\d+ failed: the server refused this client's/);
  });
});
