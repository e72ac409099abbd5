// A throwaway certificate authority (openssl) and the TLS side of the test servers: their arguments and a TLS PING.
//
//   const pki = makePki(dir);          // CA, server, client, expired server, foreign client: PEM files under dir
//   startRedisServer({ tls: { pki } }) // TLS only (--port 0 --tls-port N), clients must show a certificate
//   startRedisServer({ tls: { pki, authClients: false } })
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';

/** PEM file paths. The server certificate names localhost and 127.0.0.1. */
export interface Pki {
  readonly ca: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
  /** The server certificate again, but expired yesterday. */
  readonly expiredCert: string;
  /** A client certificate from another CA, which the servers refuse. */
  readonly foreignCert: string;
  readonly foreignKey: string;
}

export interface TlsServerOptions {
  readonly pki: Pki;
  /** `--tls-auth-clients`: the server asks for a client certificate (mutual TLS). Default true. */
  readonly authClients?: boolean;
  /** Serve the expired certificate. */
  readonly expired?: boolean;
}

const openssl = (args: string[], cwd: string) => execFileSync('openssl', args, { cwd, stdio: 'ignore' });

/** A P-256 key and a certificate for `name` signed by `ca` (self-signed when no CA), valid `days` (-1: expired). */
function issue(dir: string, name: string, ca: string | null, days: number, san?: string) {
  const key = `${name}.key`;
  const csr = `${name}.csr`;
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key], dir);
  if (ca === null) {
    openssl(
      ['req', '-x509', '-new', '-key', key, '-subj', `/CN=${name}`, '-days', '1', '-out', `${name}.crt`],
      dir,
    );
    return;
  }
  openssl(['req', '-new', '-key', key, '-subj', `/CN=${name}`, '-out', csr], dir);
  if (san) writeFileSync(path.join(dir, `${name}.ext`), `subjectAltName=${san}\n`);
  const ext = san ? ['-extfile', `${name}.ext`] : [];
  const signer = ['-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial'];
  openssl(['x509', '-req', '-in', csr, ...signer, '-days', String(days), '-out', `${name}.crt`, ...ext], dir);
}

/** Makes a CA and the certificates the TLS tests need under `dir` (about 100 ms of openssl). */
export function makePki(dir: string): Pki {
  mkdirSync(dir, { recursive: true });
  const san = 'DNS:localhost,IP:127.0.0.1';
  issue(dir, 'ca', null, 1);
  issue(dir, 'server', 'ca', 1, san);
  issue(dir, 'expired', 'ca', -1, san);
  issue(dir, 'client', 'ca', 1);
  issue(dir, 'foreign-ca', null, 1);
  issue(dir, 'foreign', 'foreign-ca', 1);
  const file = (name: string) => path.join(dir, name);
  return {
    ca: file('ca.crt'),
    serverCert: file('server.crt'),
    serverKey: file('server.key'),
    clientCert: file('client.crt'),
    clientKey: file('client.key'),
    expiredCert: file('expired.crt'),
    foreignCert: file('foreign.crt'),
    foreignKey: file('foreign.key'),
  };
}

/** redis-server's arguments for TLS only on `port`, TLS to replicas, masters and the cluster bus too. */
export function tlsServerArgs(port: number, opts: TlsServerOptions): string[] {
  const { pki } = opts;
  return [
    '--port',
    '0',
    '--tls-port',
    String(port),
    '--tls-cert-file',
    opts.expired ? pki.expiredCert : pki.serverCert,
    '--tls-key-file',
    opts.expired ? path.join(path.dirname(pki.expiredCert), 'expired.key') : pki.serverKey,
    '--tls-ca-cert-file',
    pki.ca,
    // The server's own outgoing connections (replication, Sentinel, cluster bus) show the client certificate.
    '--tls-client-cert-file',
    pki.clientCert,
    '--tls-client-key-file',
    pki.clientKey,
    '--tls-auth-clients',
    opts.authClients === false ? 'no' : 'yes',
    '--tls-replication',
    'yes',
    '--tls-cluster',
    'yes',
  ];
}

/** The TLS options of a test client that trusts the CA and shows the client certificate. */
export function clientTls(pki: Pki): tls.ConnectionOptions {
  return {
    ca: readFileSync(pki.ca),
    cert: readFileSync(pki.clientCert),
    key: readFileSync(pki.clientKey),
    // An expired test certificate must still answer PING: readiness is not what the tests check.
    rejectUnauthorized: false,
  };
}

/** pingRaw over TLS: the first reply line, or null. */
export function pingTls(port: number, host: string, pki: Pki, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    let reply = '';
    const socket = tls.connect({ host, port, ...clientTls(pki) });
    const done = (line: string | null) => {
      socket.destroy();
      resolve(line);
    };
    socket.setTimeout(timeoutMs, () => done(null));
    socket.on('error', () => done(null)); // a TLS socket may report a second error (the peer's alert)
    socket.once('secureConnect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      const end = reply.indexOf('\r\n');
      if (end >= 0) done(reply.slice(0, end));
    });
    socket.once('end', () => done(null));
  });
}
