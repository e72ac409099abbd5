// A request body of raw bytes (PUT /store/string/{key} with application/octet-stream), at most the value limit.
import express, { type RequestHandler } from 'express';
import { ApiError } from '../errors';

const OCTETS = 'application/octet-stream';

/** Whether the client asks for raw bytes rather than JSON (an Accept naming application/octet-stream, not JSON). */
export function wantsBytes(accept: string | undefined): boolean {
  return accept?.includes(OCTETS) === true && !accept.includes('json');
}

/**
 * Reads the body as a Buffer, refusing another Content-Type (415) and more than `limit` bytes (413: announced
 * by Content-Length before anything is read, else as soon as the chunks cross it).
 */
export function bytesBody(limit: number): RequestHandler {
  const parse = express.raw({ limit, type: () => true });
  return (req, res, next) => {
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== OCTETS) {
      throw new ApiError('unsupported_media_type', `Content-Type must be ${OCTETS}, not '${type || 'none'}'`);
    }
    const length = Number(req.headers['content-length'] ?? 0);
    if (length > limit) {
      throw new ApiError(
        'payload_too_large',
        `The value of ${length} bytes exceeds the limit of ${limit} bytes`,
        {
          headers: { Connection: 'close' },
        },
      );
    }
    parse(req, res, (err?: unknown) => {
      // No body at all (Content-Length: 0): the empty value.
      if (!err && !Buffer.isBuffer(req.body)) req.body = Buffer.alloc(0);
      next(err);
    });
  };
}
