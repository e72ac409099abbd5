// Idempotency-Key (draft-ietf-httpapi-idempotency-key-header): a write's reply recorded by the script that writes,
// and replayed, without running anything, to a retry of the same request (docs/binary-and-retries.md).
import { Cluster, ReplyError } from 'ioredis';
import { ApiError } from '../errors';
import type { Reply } from '../redis/client';
import { slotTag } from '../redis/keys';
import type { Outcome } from './op';
import { type Store, sendScript, withDeadline } from './send';

/** One request's Idempotency-Key, as the HTTP layer resolved it (http/idempotency-key.ts). */
export interface Idempotency {
  /** A digest of the credential's scope, the service's key prefix and the key the client sent. */
  readonly digest: string;
  /** A digest of the request (method, path and query, conditions, body): a different one under the key is 422. */
  readonly fingerprint: string;
  /** Names this request's claim, so that only its own write script can turn it into a record. */
  readonly token: string;
  readonly ttlMs: number;
  /** How long a claim holds when its request never finishes (the process died): then a retry may run. */
  readonly lockMs: number;
  /** Set when the answer is a replay: the response says `Idempotent-Replayed: true`. */
  replayed: boolean;
}

/** What a waiting list pop recorded (not a script's reply: its wait runs outside any script). */
export type Recorded = { readonly outcome: Outcome } | { readonly error: ApiError };

/** The record of `idem` for a write to `redisKey`: beside it (its slot) on a Cluster. */
function recordKey(store: Store, idem: Idempotency, redisKey: string): string {
  const tag = store.redis instanceof Cluster ? slotTag(redisKey) : undefined;
  return store.keyspace.idempotency(idem.digest, tag);
}

/**
 * Sends the writing script `name` (a `...Buffer` variant for Buffer replies) on `keys` (as Redis names them) with
 * `rest` (its arguments after the keys) under `idem`: claims the record first; a record already made answers its
 * reply without running anything. `waits`: a nil reply keeps the claim, for `finish` (a list pop's wait).
 */
export async function sendIdempotent(
  store: Store,
  slot: number,
  name: string,
  keys: readonly string[],
  rest: () => unknown[],
  idem: Idempotency,
  waits = false,
): Promise<Reply | Recorded> {
  const record = recordKey(store, idem, keys[0] ?? '');
  const buffers = name.endsWith('Buffer');
  const claimArgs = [record, idem.token, idem.fingerprint, idem.lockMs] as const;
  // A claim not answered in time may still run when Redis catches up: the release, sent after it on the same
  // connection, then ends it, so that the key is not left "in use" for a retry.
  const claim = await withDeadline(store.redis.idempotentClaimBuffer(...claimArgs), store.deadlineMs).catch(
    async (err: unknown) => {
      await release(store, record, idem);
      throw err;
    },
  );
  const [state, fingerprint, last] = claim.map((b) => b ?? null);
  if (String(state) !== 'new') {
    if (String(fingerprint) !== idem.fingerprint) throw mismatch();
    if (String(state) === 'pending') throw inUse(Number(last));
    // With replicas to confirm writes, a replay is answered only once they hold the recorded write, as the first
    // answer would have been: the claim again through the durable writer, whose WAIT covers its earlier writes.
    if (store.durable) {
      const [err] = await sendScript(store, slot, 'idempotentClaimBuffer', () => [...claimArgs], true);
      if (err) throw err;
    }
    idem.replayed = true;
    return replay(last as Buffer, buffers);
  }
  const inner = buffers ? name.slice(0, -'Buffer'.length) : name;
  const args = () => [
    keys.length + 1,
    record,
    ...keys,
    idem.token,
    idem.ttlMs,
    waits ? '1' : '0',
    inner,
    ...rest(),
  ];
  let reply: Reply;
  try {
    reply = await sendScript(store, slot, buffers ? 'idempotentBuffer' : 'idempotent', args, true);
  } catch (err) {
    await release(store, record, idem);
    throw err;
  }
  // Any error: not answered (Redis unreachable, timed out), or refused before it recorded anything (OOM,
  // READONLY, the feed's stream elsewhere): if the script did not record, a retry may run it. A script that did
  // record (its reply is an error like PRECONDITION_FAILED or REPLY_TOO_LARGE) keeps its record: the release is a
  // compare-and-delete on this request's token, which the record no longer holds.
  if (reply[0]) await release(store, record, idem);
  if (reply[0]?.message === 'IDEM_LOST') throw inUse(1);
  return reply;
}

/** After a waiting pop: records its outcome under the claim its script kept, or releases it on a 5xx. */
export async function finish(
  store: Store,
  redisKey: string,
  idem: Idempotency,
  result: Outcome | ApiError,
): Promise<void> {
  const record = recordKey(store, idem, redisKey);
  if (result instanceof ApiError && result.status >= 500) return release(store, record, idem);
  const json =
    result instanceof ApiError
      ? { error: { type: result.type, message: result.message } }
      : { outcome: { status: result.status, body: result.body, etag: result.etag } };
  const call = store.redis.idempotentSettle(record, idem.token, `J${JSON.stringify(json)}`, idem.ttlMs);
  await withDeadline(call, store.deadlineMs).catch(() => {});
}

function release(store: Store, record: string, idem: Idempotency): Promise<void> {
  const call = store.redis.idempotentSettle(record, idem.token);
  return withDeadline(call, store.deadlineMs).then(
    () => {},
    () => {},
  );
}

export function isRecorded(reply: Reply | Recorded): reply is Recorded {
  return !Array.isArray(reply);
}

/** A record as the live call would have answered: a script's reply ('R', see idempotent-n.lua) or 'J' an outcome. */
function replay(record: Buffer, buffers: boolean): Reply | Recorded {
  if (record[0] === 0x4a) {
    const json = JSON.parse(record.toString('utf8', 1));
    if (json.outcome) return { outcome: json.outcome as Outcome };
    return { error: new ApiError(json.error.type, json.error.message) };
  }
  const value = parseReply(record, 1, buffers).value;
  return value instanceof Error ? [value, null] : [null, value];
}

/** Parses one serialized reply at `at`: strings as Buffers or UTF-8 text, as ioredis would have answered. */
function parseReply(buf: Buffer, at: number, buffers: boolean): { value: unknown; next: number } {
  const tag = buf[at];
  if (tag === 0x6e) return { value: null, next: at + 1 };
  if (tag === 0x69 || tag === 0x61) {
    const end = buf.indexOf(0x3b, at);
    const n = Number(buf.toString('latin1', at + 1, end));
    if (tag === 0x69) return { value: n, next: end + 1 };
    const items: unknown[] = [];
    let next = end + 1;
    for (let i = 0; i < n; i++) {
      const item = parseReply(buf, next, buffers);
      items.push(item.value);
      next = item.next;
    }
    return { value: items, next };
  }
  const colon = buf.indexOf(0x3a, at);
  const start = colon + 1;
  const end = start + Number(buf.toString('latin1', at + 1, colon));
  const bytes = buf.subarray(start, end);
  if (tag === 0x65) return { value: new ReplyError(bytes.toString('utf8')), next: end };
  return { value: buffers ? Buffer.from(bytes) : bytes.toString('utf8'), next: end };
}

function mismatch(): ApiError {
  return new ApiError(
    'idempotency_key_mismatch',
    'This Idempotency-Key was used for a different request (method, path, conditions or body); use a new key',
  );
}

function inUse(ms: number): ApiError {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  return new ApiError(
    'idempotency_key_in_use',
    'A request with this Idempotency-Key is still being processed; retry after it has finished',
    { retryAfter: Math.min(seconds, 60) },
  );
}
