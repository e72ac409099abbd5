// The HTTP listener of an app: timeouts, a per-address connection cap, JSON answers to parser errors, graceful close.
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';
import { clientNetworks } from './client-address';
import { answerClientError } from './client-errors';
import type { Transport } from './transport';
import { acceptUpgrades } from './upgrade';

/**
 * After a graceful close starts, connections with no request in flight are closed every this many ms, not at once:
 * closing them at once would reset requests clients had already sent on them, and a request that arrives meanwhile
 * is answered with Connection: close. (A connection that went idle just before a sweep is closed by that sweep.)
 */
export const IDLE_GRACE_MS = 1_000;

/**
 * A connection closed after an answer given before the request's body was read (an early 413, an error with
 * Connection: close) is closed gently: a FIN after the answer, then what the client still sends is read and
 * discarded for at most this long and this many bytes, then it is destroyed. Closing it at once, with unread bytes
 * in the kernel, sends a reset, which makes the client's kernel discard the answer it has not read yet: a client
 * still sending its body (fetch sends no Expect: 100-continue) saw EPIPE instead of the 413 (Apache's "lingering
 * close"). A client that closes when it has the answer ends it sooner.
 */
export const LINGER_MS = 2_000;
export const LINGER_BYTES = 32 * 1024 * 1024;

type Tracked = Socket & { _httpMessage?: ServerResponse; request?: IncomingMessage };

/** Replaces Node's destroySoon (called once a Connection: close answer is written) with the gentle close above. */
function lingerOnClose(socket: Tracked): void {
  const destroySoon = socket.destroySoon.bind(socket);
  socket.destroySoon = () => {
    if (socket.request?.complete !== false) return destroySoon();
    socket.end();
    const start = socket.bytesRead;
    const until = Date.now() + LINGER_MS;
    const check = setInterval(() => {
      if (Date.now() >= until || socket.bytesRead - start > LINGER_BYTES) socket.destroy();
    }, 50);
    check.unref();
    socket.once('end', () => socket.destroy());
    socket.once('close', () => clearInterval(check));
  };
}

export interface Listener {
  readonly server: Server;
  /**
   * Stops accepting; answers requests in flight (and those that reach an open connection) with Connection: close,
   * closes connections as they become idle; resolves when the last one is closed, or after `timeoutMs`.
   */
  close(timeoutMs: number): Promise<void>;
}

/** Open connections per client address (an IPv6 network: see client-address.ts); one over `max` (0: no cap) is closed at once. */
function capPerAddress(server: Server, max: number, ctx: Transport): void {
  if (max === 0) return;
  const network = clientNetworks(ctx.config.ipv6PrefixLength);
  const open = new Map<string, number>();
  const warned = new Set<string>();
  // Before Node's own listener, so that a refused socket is destroyed before the HTTP parser reads from it.
  server.prependListener('connection', (socket: Socket) => {
    const address = network(socket.remoteAddress ?? '');
    const count = open.get(address) ?? 0;
    if (count >= max) {
      socket.destroy();
      if (!warned.has(address)) {
        warned.add(address);
        ctx.logger.warn('connection refused: too many open connections from one address', { address, max });
      }
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
      if (left < max) warned.delete(address);
    });
  });
}

const CLIENT_IP = Symbol('client ip');

/**
 * Makes `req.ip` work out the client's address once per request: Express's getter runs proxy-addr (parsing
 * X-Forwarded-For, checking SVC_TRUST_PROXY) on every read, and the rate limiter, the request's log and the
 * clients list each read it.
 */
function rememberIp(app: Express): void {
  const express = Object.getPrototypeOf(app.request) as object;
  const ip = Object.getOwnPropertyDescriptor(express, 'ip')?.get;
  if (!ip || Object.hasOwn(app.request, 'ip')) return;
  Object.defineProperty(app.request, 'ip', {
    configurable: true,
    enumerable: true,
    get(this: { [CLIENT_IP]?: string }) {
      this[CLIENT_IP] ??= ip.call(this) as string;
      return this[CLIENT_IP];
    },
  });
}

/**
 * Request and response classes whose prototypes are `app.request` and `app.response`. Express gives every
 * request and response those prototypes (Object.setPrototypeOf in app.handle): done to Node's own objects, that
 * moves each to a new hidden class, and Node's HTTP code then misses its inline caches on every request (about
 * 50 µs of CPU per request, two thirds of an Express hello world's cost; bench/ab.ts, docs/performance.md).
 * Created with those prototypes already, V8 finds nothing to change.
 *
 * The response is a class that extends Node's: V8 sizes its objects for the properties that the whole chain of
 * constructors sets. A plain function calling ServerResponse on `this` got room for a few, and each response's
 * ~40 properties then went to a dictionary at the first symbol-keyed one (OutgoingMessage's kOutHeaders):
 * 2.1 µs instead of 0.2 to construct, and slower reads of every one of its properties for the rest of the request
 * (12 % of a lone client's CPU profile). Its prototype takes app.response's place, with the same prototype and
 * own properties (`app`). The request's constructor sets few properties of its own: a plain function keeps it fast.
 */
function expressClasses(app: Express) {
  // Node's IncomingMessage is a plain constructor function: callable on an object made with another prototype.
  const init = (base: unknown) => base as (this: object, ...args: unknown[]) => void;
  function ExpressRequest(this: { [CLIENT_IP]?: string }, socket: Socket) {
    init(http.IncomingMessage).call(this, socket);
    this[CLIENT_IP] = undefined;
  }
  ExpressRequest.prototype = app.request;
  rememberIp(app);
  class ExpressResponse extends http.ServerResponse {}
  const express = app.response as object;
  Object.setPrototypeOf(ExpressResponse.prototype, Object.getPrototypeOf(express));
  const { constructor: _, ...own } = Object.getOwnPropertyDescriptors(express);
  Object.defineProperties(ExpressResponse.prototype, own);
  app.response = ExpressResponse.prototype as unknown as Express['response'];
  return {
    IncomingMessage: ExpressRequest as unknown as typeof IncomingMessage,
    ServerResponse: ExpressResponse as unknown as typeof ServerResponse,
  };
}

/** Creates the server for `app` with the configured limits and listens on `host:port`. */
export function listen(app: Express, ctx: Transport, port: number, host: string): Promise<Listener> {
  const { config } = ctx;
  const server = http.createServer({
    ...expressClasses(app),
    headersTimeout: config.headersTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    // Node checks both timeouts on this interval (30 s by default, which would triple a 10 s headers timeout).
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(config.headersTimeoutMs / 4))),
  });
  server.keepAliveTimeout = config.keepAliveTimeoutMs;
  // A client may half-close after its request (shutdown(SHUT_WR), as some clients and proxies do): Node's default
  // takes that FIN for an abort and ends the socket before the answer is written. With this (a property of
  // http.Server since Node 0.x, not an option of createServer), the answer is written, then the socket closed.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  server.maxConnections = config.maxConnections;
  capPerAddress(server, config.maxConnectionsPerIp, ctx);
  server.on('clientError', answerClientError(ctx));
  acceptUpgrades(server, app);

  let closing = false;
  // Tracked per connection, not per request (a listener on every response cost a GET several µs of CPU): at a close,
  // the response a connection is busy with is Node's `_httpMessage` of its socket.
  const sockets = new Set<Tracked>();
  server.on('connection', (socket: Tracked) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    lingerOnClose(socket);
  });
  // One listener: during a close, each response learns in time that it is its connection's last.
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    (req.socket as Tracked).request = req;
    if (closing) res.setHeader('Connection', 'close');
    app(req, res);
  });

  const close = (timeoutMs: number) =>
    new Promise<void>((resolve) => {
      closing = true;
      for (const { _httpMessage: res } of sockets)
        if (res && !res.headersSent) res.setHeader('Connection', 'close');
      const sweep = setInterval(() => server.closeIdleConnections(), IDLE_GRACE_MS);
      const hard = setTimeout(() => server.closeAllConnections(), timeoutMs);
      // server.close() would also destroy every idle connection at once (Node 19+): see IDLE_GRACE_MS.
      const closeIdle = server.closeIdleConnections;
      server.closeIdleConnections = () => {};
      server.close(() => {
        clearInterval(sweep);
        clearTimeout(hard);
        resolve();
      });
      server.closeIdleConnections = closeIdle;
    });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve({ server, close });
    });
  });
}
