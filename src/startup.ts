// Why the service could not start, as one line that names the setting to change (no stack for a known cause).
import { type Config, ConfigError } from './config';
import { RedisTlsError } from './redis/tls';

interface ListenError extends Error {
  code?: string;
  syscall?: string;
  port?: number;
  address?: string;
  hostname?: string;
}

/** The settings behind the listener that failed: the admin ones when admin has its own listener and it is that. */
function settingsFor(err: ListenError, host: string | undefined, config: Config) {
  const own = config.admin.port !== config.port;
  const admin =
    own &&
    (err.port === undefined
      ? host === config.admin.host && host !== config.host
      : err.port === config.admin.port);
  return admin ? { port: 'SVC_ADMIN_PORT', host: 'SVC_ADMIN_HOST' } : { port: 'SVC_PORT', host: 'SVC_HOST' };
}

/** `listen` errors, and `getaddrinfo` ones for a host name that does not resolve. */
function listenFailure(err: ListenError, config: Config): string | undefined {
  if (err.syscall !== 'listen' && err.syscall !== 'getaddrinfo') return undefined;
  const host = err.address ?? err.hostname;
  const setting = settingsFor(err, host, config);
  switch (err.code) {
    case 'EADDRINUSE':
      return `port ${err.port} is in use: set ${setting.port} to a free port`;
    case 'EACCES':
      return `port ${err.port} needs privileges this process lacks: set ${setting.port} to a port above 1023`;
    case 'EADDRNOTAVAIL':
      return `${host} is not an address of this machine: set ${setting.host} (0.0.0.0 listens on all of them)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host name ${host} does not resolve: set ${setting.host} to an address of this machine`;
    default:
      return undefined;
  }
}

/**
 * The message for a failed start: the listed problems of a bad configuration, one line for a listener that could
 * not open (`config` is there once the configuration loaded), else the error's stack (a bug or an unknown cause).
 */
export function startupFailure(err: unknown, config?: Config): string {
  if (err instanceof ConfigError) return err.message;
  if (err instanceof RedisTlsError) return `failed to start: ${err.message}`;
  const line = config && err instanceof Error ? listenFailure(err, config) : undefined;
  if (line) return `failed to start: ${line}`;
  return `failed to start: ${(err as Error)?.stack ?? String(err)}`;
}
