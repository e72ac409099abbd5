// Answers what Node's HTTP parser refuses (431, 400, timeouts) with the JSON error body, and counts and logs it.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, ERROR_STATUS, type ErrorType } from '../errors';
import { recordAnswer } from '../observability/observe';
import { errorBody } from './error-handler';
import type { Transport } from './transport';

/** Node's parser and timeout error codes -> the error type and message the client gets. */
function classify(code: string | undefined): { type: ErrorType; message: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        type: 'headers_too_large',
        message: `The request line and headers exceed ${http.maxHeaderSize} bytes together`,
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { type: 'payload_too_large', message: 'The chunk extensions of the request body are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { type: 'request_timeout', message: 'The request was not received in time' };
    default:
      return { type: 'invalid_request', message: `Malformed HTTP request (${code ?? 'unknown error'})` };
  }
}

/** The method of the refused request when the bytes the parser choked on start with a known one. */
function methodOf(raw: unknown): string {
  if (!Buffer.isBuffer(raw)) return 'UNKNOWN';
  const word = raw.toString('latin1', 0, 16).split(' ', 1)[0] ?? '';
  return http.METHODS.includes(word) ? word : 'UNKNOWN';
}

/** The server's 'clientError' listener: a JSON answer with Connection: close, then the socket is closed. */
export function answerClientError(
  ctx: Transport,
): (err: Error & { code?: string; rawPacket?: unknown }, socket: Duplex) => void {
  return (err, socket) => {
    const response = (socket as Duplex & { _httpMessage?: http.ServerResponse })._httpMessage;
    // A client that went away, or an answer already under way, leaves nothing to answer.
    if (err.code === 'ECONNRESET' || !socket.writable || response?.headersSent) {
      socket.destroy();
      return;
    }
    const { type, message } = classify(err.code);
    const status = ERROR_STATUS[type];
    const requestId = randomUUID();
    const method = response?.req.method ?? methodOf(err.rawPacket);
    // A HEAD's answer has the headers of the body it would carry, never the body (RFC 9110 section 9.3.2).
    const text = JSON.stringify(errorBody(new ApiError(type, message), requestId, false));
    const body = method === 'HEAD' ? '' : text;
    const head = [
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(text)}`,
      `${ctx.config.requestIdHeader}: ${requestId}`,
      'Connection: close',
    ];
    socket.end(`${head.join('\r\n')}\r\n\r\n${body}`, () => socket.destroy());
    // A client that does not read its answer does not keep the socket.
    setTimeout(() => socket.destroy(), 5_000).unref();
    recordAnswer(ctx.telemetry, ctx.logger, {
      method,
      route: 'unknown',
      status,
      ms: 0,
      errorType: type,
      ip: (socket as Duplex & { remoteAddress?: string }).remoteAddress ?? '',
      userAgent: response?.req.headers['user-agent'] ?? '',
      locals: { requestId },
    });
  };
}
