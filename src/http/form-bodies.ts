// Form bodies: what an HTML form or a no-cors fetch can send without a CORS preflight is refused on JSON routes (415).
import type { Request } from 'express';
import { ApiError } from '../errors';

/** The content types an HTML form (or a no-cors fetch) can send without a CORS preflight. */
const FORM_TYPE = /^\s*(?:application\/x-www-form-urlencoded|multipart\/form-data|text\/plain)\s*(?:;|$)/i;
const BEARER = /^\s*bearer\s/i;

/**
 * Refuses (415) a request of a form content type (`application/x-www-form-urlencoded`, `multipart/form-data`,
 * `text/plain`) on a JSON route, with a body or without: what a page's form or no-cors fetch sends. `bearerToo`
 * lets such a request through when it carries a Bearer Authorization header (which no form can send): /upstash,
 * whose documented `curl -d` sends a form type with its token. `what` names the request in the message.
 */
export function refuseFormBody(req: Request, what: string, bearerToo = false): void {
  const type = req.headers['content-type'];
  if (type === undefined || !FORM_TYPE.test(type)) return;
  if (bearerToo && BEARER.test(req.headers.authorization ?? '')) return;
  throw new ApiError(
    'unsupported_media_type',
    `${what} takes no form content type ('${type.slice(0, 100)}'): send application/json, or no Content-Type ` +
      'without a body',
  );
}
