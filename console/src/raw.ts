// Calls of any operation by path (TTL, list items, sorted-set members ...) through the client's typed transport.
import { GatewayError } from '../../clients/typescript/src/index';
import type { Session } from './session';

interface Outcome {
  data?: unknown;
  error?: unknown;
  response: Response;
}
type Untyped = Record<'GET' | 'POST' | 'DELETE', (path: string, init: object) => Promise<Outcome>>;

export interface Sent {
  // biome-ignore lint/suspicious/noExplicitAny: the answer of whichever operation the path names
  data: any;
  etag: string | undefined;
}

/** `send(s, 'POST', '/store/list/{key}/index/{index}', {key, index}, {body, ifMatch})`: the data, or a GatewayError. */
export async function send(
  session: Session,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  params: Record<string, string | number>,
  options: { body?: unknown; ifMatch?: string; ifNoneMatch?: string; query?: Record<string, unknown> } = {},
): Promise<Sent> {
  const headers: Record<string, string> = {};
  if (options.ifMatch) headers['If-Match'] = options.ifMatch;
  if (options.ifNoneMatch) headers['If-None-Match'] = options.ifNoneMatch;
  const init = { params: { path: params, query: options.query }, body: options.body, headers };
  const { data, error, response } = await (session.gw.api as unknown as Untyped)[method](path, init);
  if (!response.ok) throw GatewayError.fromResponse(response, error);
  return { data, etag: response.headers.get('ETag') ?? undefined };
}

/** The path family of a Redis type, for the typed endpoints (`/store/<family>/{key}`). */
export const FAMILIES: Record<string, string> = {
  string: 'string',
  hash: 'hash',
  set: 'set',
  list: 'list',
  zset: 'zset',
};
