// TLS to Redis: the connection options from SVC_REDIS_TLS_* (every topology), and why a handshake failed, in words.
import { readFileSync } from 'node:fs';
import tls from 'node:tls';
import type { Cluster, Redis } from 'ioredis';
import { type Config, ConfigError } from '../config';
import type { HostPort } from '../setting';

/** TLS is on with a rediss:// URL, for Sentinel and Cluster too. */
export function tlsEnabled(config: Config): boolean {
  return config.redis.url.startsWith('rediss:');
}

/** The options of every TLS connection to Redis (ioredis's `tls`), or undefined without TLS; reads the PEM files. */
export function tlsOptions(config: Config): tls.ConnectionOptions | undefined {
  if (!tlsEnabled(config)) return undefined;
  const { caFile, certFile, keyFile, serverName } = config.redis.tls;
  const problems: string[] = [];
  const read = (setting: string, file: string | undefined) => {
    if (file === undefined) return {};
    try {
      return { [setting]: readFileSync(file) };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'not readable' : code;
      problems.push(`SVC_REDIS_TLS_${setting.toUpperCase()}_FILE ${file}: ${why}`);
      return {};
    }
  };
  const options: tls.ConnectionOptions = {
    ...read('ca', caFile),
    ...read('cert', certFile),
    ...read('key', keyFile),
    ...(serverName === undefined ? {} : { servername: serverName }),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return options;
}

/** A TLS handshake with Redis failed for a reason that retrying will not change: the service does not start. */
export class RedisTlsError extends Error {
  constructor(where: string, cause: Error & { code?: string }) {
    super(`TLS to Redis at ${where} failed: ${explain(cause)}`);
    this.name = 'RedisTlsError';
  }
}

const UNTRUSTED =
  /^(UNABLE_TO_(GET_ISSUER_CERT|GET_ISSUER_CERT_LOCALLY|VERIFY_LEAF_SIGNATURE)|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT)$/;
const REFUSED_CLIENT =
  /ALERT_(CERTIFICATE_REQUIRED|BAD_CERTIFICATE|UNKNOWN_CA|CERTIFICATE_UNKNOWN|ACCESS_DENIED)/;

/** What went wrong and which setting to change, with the TLS code. */
function explain(err: Error & { code?: string; reason?: string }): string {
  const code = err.code ?? '';
  const why = (text: string) => `${text} (${code}: ${err.reason ?? err.message})`;
  if (code === 'CERT_HAS_EXPIRED') return why("the server's certificate has expired: renew it");
  if (code === 'CERT_NOT_YET_VALID')
    return why("the server's certificate is not valid yet: check the clocks");
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return why(
      "the server's certificate does not hold the name connected to: set SVC_REDIS_TLS_SERVER_NAME to a name it holds",
    );
  if (UNTRUSTED.test(code))
    return why(
      "the server's certificate is not signed by a trusted CA: set SVC_REDIS_TLS_CA_FILE to the CA that signed it",
    );
  if (REFUSED_CLIENT.test(code))
    return why(
      "the server refused this client's certificate, or its lack of one: set SVC_REDIS_TLS_CERT_FILE and SVC_REDIS_TLS_KEY_FILE to a certificate its CA signed",
    );
  return why('the TLS handshake failed');
}

/** A certificate or handshake failure (retrying will not help), as opposed to a network error or a timeout. */
export function isTlsFailure(err: unknown): err is Error & { code: string } {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || code === 'ERR_TLS_HANDSHAKE_TIMEOUT') return false;
  return /^(ERR_SSL_|ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|INVALID_CA|INVALID_PURPOSE)/.test(
    code,
  );
}

/**
 * Opens TLS to `node` and sends PING: resolves with the TLS failure, or null once the server answered anything
 * (NOAUTH included) or the node could not be reached (the connection's own retries deal with that). The PING makes
 * a server that refuses the client's certificate say so: under TLS 1.3 it does only after the handshake.
 */
export function probeTls(
  node: HostPort,
  options: tls.ConnectionOptions,
  timeoutMs: number,
): Promise<(Error & { code: string }) | null> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: node.host, port: node.port, ...options });
    const done = (failure: unknown) => {
      socket.destroy();
      resolve(isTlsFailure(failure) ? failure : null);
    };
    socket.setTimeout(timeoutMs, () => done(null));
    // `on`: a destroyed TLS socket may still report the server's alert, a second error.
    socket.on('error', done);
    socket.once('secureConnect', () => socket.write('PING\r\n'));
    socket.once('data', () => done(null));
    socket.once('end', () => done(null));
  });
}

/** The nodes a client starts from: the standalone URL's, the Sentinels, or the Cluster's seed nodes. */
export function seedNodes(config: Config): readonly HostPort[] {
  const { clusterNodes, sentinels, url } = config.redis;
  if (clusterNodes) return clusterNodes;
  if (sentinels) return sentinels;
  const { hostname, port } = new URL(url);
  return [{ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || 6379) }];
}

/**
 * Under TLS, checks TLS to every seed node before anything connects, so that a certificate problem stops the start
 * with its reason (ioredis would retry it forever, and Sentinel's connector hides it behind "all sentinels are
 * unreachable"). Without TLS, does nothing.
 */
export async function checkTls(config: Config): Promise<void> {
  const options = tlsOptions(config);
  if (!options) return;
  const nodes = seedNodes(config);
  const failures = await Promise.all(nodes.map((n) => probeTls(n, options, config.redis.connectTimeoutMs)));
  const index = failures.findIndex((f) => f !== null);
  const failure = failures[index];
  const node = nodes[index];
  if (failure && node) throw new RedisTlsError(`${node.host}:${node.port}`, failure);
}

/** Where a data connection's TLS failed, for the message: ioredis's error does not say. */
function dataNode(config: Config): string {
  if (config.redis.sentinels) return `the master the Sentinels name '${config.redis.sentinelName}'`;
  const [node] = seedNodes(config);
  return node ? `${node.host}:${node.port}` : 'the data node';
}

/**
 * Connects `client`. Under TLS, a TLS failure of any of its connections while it connects (a data node a Sentinel
 * names, a Cluster node the seeds name) rejects with RedisTlsError and stops its retries.
 */
export async function connectOrTlsFailure(client: Redis | Cluster, config: Config): Promise<void> {
  if (!tlsEnabled(config)) return client.connect();
  let onError: (err: Error) => void = () => {};
  let onNodeError: (err: Error, node: string) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    onError = (err) => isTlsFailure(err) && reject(new RedisTlsError(dataNode(config), err));
    onNodeError = (err, node) => isTlsFailure(err) && reject(new RedisTlsError(node, err));
  });
  client.on('error', onError);
  client.on('node error', onNodeError);
  try {
    await Promise.race([client.connect(), failed]);
  } catch (err) {
    const failure = isTlsFailure(err) ? new RedisTlsError(dataNode(config), err) : err;
    if (failure instanceof RedisTlsError) client.disconnect();
    throw failure;
  } finally {
    client.off('error', onError);
    client.off('node error', onNodeError);
  }
}
