// Gives every request an id: a safe incoming header value is kept, anything else is replaced by a new UUID.
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(headerName: string): RequestHandler {
  const lower = headerName.toLowerCase();
  return (req, res, next) => {
    const incoming = req.headers[lower];
    const id = typeof incoming === 'string' && SAFE_ID.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = id;
    res.setHeader(headerName, id);
    next();
  };
}
