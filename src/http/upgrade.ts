// Upgrade requests (WebSocket handshakes) through the app, so that they are guarded and answered like any request.
import http, { type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';

/** What the listener keeps of an upgrade request, so that the route can complete the WebSocket handshake. */
export const UPGRADE = Symbol('upgrade');
export type UpgradeRequest = IncomingMessage & { [UPGRADE]?: { socket: Duplex; head: Buffer } };

/**
 * An upgrade request (a WebSocket handshake) goes through the app like any request, with a response on its
 * socket: rate limits, authentication, validation and errors as everywhere; the route that accepts it (the change
 * feed's WebSocket) completes the handshake with the socket and head kept under UPGRADE. An answer that is not an
 * upgrade closes the socket.
 */
export function acceptUpgrades(server: Server, app: Express): void {
  server.on('upgrade', (req: UpgradeRequest, socket: Socket, head: Buffer) => {
    req[UPGRADE] = { socket, head };
    const res = new http.ServerResponse(req);
    res.assignSocket(socket);
    res.shouldKeepAlive = false;
    res.once('finish', () => socket.end());
    app(req, res);
  });
}
