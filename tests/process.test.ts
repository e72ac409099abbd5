// The process (src/main.ts): a failed start says why in one line; SIGTERM drains and exits 0.
import http from 'node:http';
import net from 'node:net';
import Redis from 'ioredis';
import { loadConfig } from '../src/config';
import { startupFailure } from '../src/startup';
import { freePort, type RedisServer, startRedisServer } from './support/redis-server';
import { killServices, startService } from './support/service-process';

afterAll(killServices);
const start = startService;

const get = (port: number, path: string) =>
  new Promise<number>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });

test('when settings are invalid, then the start fails with exit 2 and lists every problem', async () => {
  const svc = start({ SVC_PORT: 'eighty', SVC_LOG_LEVEL: 'loud', SVC_RATE_LIMIT_WINDOW: '0' });
  expect((await svc.exited).code).toBe(2);
  expect(svc.output()).toMatch(/SVC_PORT/);
  expect(svc.output()).toMatch(/SVC_LOG_LEVEL/);
  expect(svc.output()).toMatch(/SVC_RATE_LIMIT_WINDOW/);
  expect(svc.output()).not.toMatch(/\n\s+at /); // a list of problems, not a stack trace
});

describe('the start-up failure line', () => {
  const config = loadConfig({ SVC_PORT: '8080', SVC_ADMIN_PORT: '9090', SVC_ADMIN_HOST: '10.0.0.9' });
  const listenError = (fields: Record<string, unknown>) => Object.assign(new Error('listen failed'), fields);

  test.each([
    [
      { code: 'EACCES', syscall: 'listen', port: 9090 },
      'port 9090 needs privileges this process lacks: set SVC_ADMIN_PORT to a port above 1023',
    ],
    [
      { code: 'EADDRNOTAVAIL', syscall: 'listen', address: '10.0.0.9', port: 9090 },
      '10.0.0.9 is not an address of this machine: set SVC_ADMIN_HOST (0.0.0.0 listens on all of them)',
    ],
    [
      { code: 'ENOTFOUND', syscall: 'getaddrinfo', hostname: 'nosuch.invalid' },
      'the host name nosuch.invalid does not resolve: set SVC_HOST to an address of this machine',
    ],
  ])('when listen fails with %j, then one line names the setting', (fields, line) => {
    expect(startupFailure(listenError(fields), config)).toBe(`failed to start: ${line}`);
  });

  test('when the cause is unknown (a bug), then the stack is kept', () => {
    expect(startupFailure(new TypeError('boom'), config)).toMatch(
      /^failed to start: TypeError: boom\n\s+at /,
    );
  });
});

describe('a running service', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedisServer({ args: ['--enable-debug-command', 'yes'] });
  });
  afterAll(() => redis.stop());

  /** A port this test holds open, so that the service finds it taken. */
  async function takenPort(): Promise<net.Server> {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    return holder;
  }
  const portOf = (server: net.Server) => (server.address() as net.AddressInfo).port;

  test.each([
    ['the data port', 'SVC_PORT'],
    ['the admin port', 'SVC_ADMIN_PORT'],
  ])(
    'when %s is taken, then the start fails with one line naming %s, and no stack',
    async (_what, setting) => {
      const holder = await takenPort();
      try {
        const taken = portOf(holder);
        const ports: Record<string, string> =
          setting === 'SVC_PORT'
            ? { SVC_PORT: String(taken) }
            : { SVC_PORT: String(await freePort()), SVC_ADMIN_PORT: String(taken) };
        const svc = start({ ...ports, SVC_REDIS_URL: redis.url });
        expect((await svc.exited).code).toBe(1);
        expect(svc.stderr()).toBe(
          `failed to start: port ${taken} is in use: set ${setting} to a free port\n`,
        );
        // What did succeed was logged before the reason; the data listener never claims to listen on a taken port.
        if (setting === 'SVC_PORT') expect(svc.stdout()).not.toMatch(/listening/);
        expect(svc.stdout()).not.toMatch(/admin listening|\n\s+at /);
      } finally {
        holder.close();
      }
    },
  );

  test('when SIGTERM arrives during a request, then that request is answered and the process exits 0', async () => {
    const port = await freePort();
    const svc = start({
      SVC_PORT: String(port),
      SVC_REDIS_URL: redis.url,
      SVC_REDIS_COMMAND_TIMEOUT_MS: '5000',
      // The pause below would time the limiter's counter out, and an anonymous request is then refused (503:
      // the limiter fails closed, docs/security.md); this test is about the shutdown.
      SVC_RATE_LIMIT_ENABLED: 'false',
    });
    const deadline = Date.now() + 60_000;
    while (!svc.output().includes('listening') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));

    // Redis is made to pause, so the request below is still in flight when SIGTERM arrives.
    const blocker = new Redis(redis.url);
    const sleeping = blocker.call('DEBUG', 'SLEEP', '1').catch(() => undefined);
    await new Promise((r) => setTimeout(r, 100));
    const inFlight = get(port, '/store/string/some-key');
    await new Promise((r) => setTimeout(r, 200));
    svc.child.kill('SIGTERM');

    expect(await inFlight).toBe(404);
    expect((await svc.exited).code).toBe(0);
    await sleeping;
    blocker.disconnect();
  });
});
