// Test credentials: API keys, key:new output, and sample requests for every operation of the contract.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import { deref, type Operation, type Permission } from '../../src/http/contract';
import { openapiDocument, type TestApp } from './app';

export interface KeyEntry {
  id: string;
  key: string;
  permissions: Permission[];
  prefix?: string;
}

/** An API key entry with a long enough plaintext key (keys shorter than 16 characters are refused). */
export const apiKey = (id: string, permissions: Permission[], prefix?: string): KeyEntry => ({
  id,
  key: `test-key-${id}-0123456789`,
  permissions,
  ...(prefix ? { prefix } : {}),
});

export const bearer = (entry: { key: string }) => `Bearer ${entry.key}`;
export const basicAuth = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;

/** Runs scripts/key-new.mjs; returns the secret it printed once (if any) and the parsed entry. */
export function keyNew(args: string[]): { secret?: string; entry: Record<string, unknown> } {
  const script = path.join(__dirname, '..', '..', 'scripts', 'key-new.mjs');
  const out = execFileSync(process.execPath, [script, ...args], { encoding: 'utf8' });
  const lines = out.trim().split('\n');
  const secret = lines.find((l) => l.includes('shown once'))?.split(': ')[1];
  return { secret, entry: JSON.parse(lines[lines.length - 1] as string) };
}

type Body = { content: Record<string, Json> };
type Doc = { paths: Record<string, Record<string, { requestBody?: Body | { $ref: string } }>> };
type Json = { examples?: Record<string, { value: unknown }>; example?: unknown };

/** A valid request for an operation: path parameters filled in, the first documented body example. */
export function sampleRequest(t: TestApp, op: Operation, authorization?: string) {
  const url = op.path
    .replace('{key}', `k-${op.id}`)
    .replace('{field}', 'f')
    .replace('{member}', 'm')
    .replace('{index}', '0');
  const doc = openapiDocument() as unknown as Doc;
  const item = doc.paths[op.path];
  const requestBody = item && deref<Doc['paths'][string]>(doc, item)[op.method]?.requestBody;
  const content = requestBody && deref<Body>(doc, requestBody).content;
  const media = content?.['application/json'];
  const body = media?.example ?? Object.values(media?.examples ?? {})[0]?.value;
  const req = request(t.data)[op.method](url);
  if (authorization) req.set('Authorization', authorization);
  // A body of raw bytes (PUT /store/string/{key}).
  if (content?.['application/octet-stream'])
    return req.type('application/octet-stream').send(Buffer.from('v'));
  // A POST without a body still says JSON: the service refuses one a form could send (see http/routes.ts).
  if (body === undefined && op.method === 'post') req.set('Content-Type', 'application/json');
  return body === undefined ? req : req.send(body as object);
}
