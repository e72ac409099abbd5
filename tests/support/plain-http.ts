// A plain HTTP/1.1 client on a raw socket: sends exactly the headers given (as curl does), nothing a library adds.
import net from 'node:net';

export interface PlainAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Decodes a chunked body (the answer's framing when it has no Content-Length). */
function unchunk(raw: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = Number.parseInt(raw.subarray(at, eol).toString('latin1'), 16);
    if (!(size > 0)) break;
    parts.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/**
 * `method path` to 127.0.0.1:`port` with Host, `headers` and, when `body` is given, its Content-Length; the
 * connection closes after the answer. Like `curl -X POST url` when no body and no header are given.
 */
export function plain(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<PlainAnswer> {
  const lines = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  const text = `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const raw = Buffer.concat(chunks);
      const end = raw.indexOf('\r\n\r\n');
      const [statusLine = '', ...fields] = raw.subarray(0, end).toString('latin1').split('\r\n');
      const answerHeaders: Record<string, string> = {};
      for (const field of fields) {
        const colon = field.indexOf(':');
        answerHeaders[field.slice(0, colon).toLowerCase()] = field.slice(colon + 1).trim();
      }
      const rest = raw.subarray(end + 4);
      const content = answerHeaders['transfer-encoding'] === 'chunked' ? unchunk(rest) : rest;
      resolve({
        status: Number(statusLine.split(' ')[1]),
        headers: answerHeaders,
        body: content.toString('utf8'),
      });
    });
  });
}
