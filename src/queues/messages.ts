// Sending, receiving and settling messages: request bodies -> queue script arguments, script answers -> responses.
import type { Idempotency } from '../engine/idempotent';
import { ApiError } from '../errors';
import type { Store } from '../redis/store';
import { callQueue, list, parsed } from './calls';

export interface MessageInput {
  body: string;
  encoding?: 'text' | 'base64';
  attributes?: Record<string, string>;
  delay?: number;
  not_before?: string;
  group?: string;
  dedup_id?: string;
}

/** A message as queue.lua's `view` writes it (times in ms). */
export interface View {
  id: string;
  body: string;
  encoding: string;
  attributes: Record<string, string> | unknown[];
  group: string | null;
  sent_at: number;
  delivery_count: number;
  first_delivered_at: number | null;
  lease_expires_at: number | null;
  last_error: string | null;
  dead_at: number | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A message as the API answers it; `receipt` only for a delivery. */
export function shown(v: View, receipt = false): Record<string, unknown> {
  return {
    id: v.id,
    ...(receipt ? { receipt: receiptOf(v.id, v.delivery_count) } : {}),
    body: v.body,
    encoding: v.encoding,
    attributes: Array.isArray(v.attributes) ? {} : v.attributes,
    group: v.group,
    sent_at: iso(v.sent_at),
    delivery_count: v.delivery_count,
    first_delivered_at: iso(v.first_delivered_at),
    lease_expires_at: iso(v.lease_expires_at),
    ...(v.last_error !== null ? { last_error: v.last_error } : {}),
    ...(v.dead_at !== null ? { dead_at: iso(v.dead_at) } : {}),
  };
}

/** A receipt names one delivery: the message and its delivery count, opaque to clients. */
export const receiptOf = (id: string, count: number) => Buffer.from(`${id}.${count}`).toString('base64url');

function fromReceipt(receipt: string): { m: string; c: number } | undefined {
  const match = /^(\d{1,15})\.(\d{1,9})$/.exec(Buffer.from(receipt, 'base64url').toString('latin1'));
  return match ? { m: match[1] as string, c: Number(match[2]) } : undefined;
}

/** One message -> the send script's item; `maxBytes` bounds its body as decoded. */
function item(m: MessageInput, index: number, maxBytes: number): Record<string, unknown> {
  const encoding = m.encoding ?? 'text';
  const where = `messages[${index}]`;
  if (encoding === 'base64' && !BASE64.test(m.body))
    throw new ApiError('invalid_value', `${where}.body is not base64 (RFC 4648, with padding)`);
  const bytes = encoding === 'base64' ? Buffer.from(m.body, 'base64').length : Buffer.byteLength(m.body);
  if (bytes > maxBytes)
    throw new ApiError('payload_too_large', `${where}.body is ${bytes} bytes; the limit is ${maxBytes}`);
  if (m.delay !== undefined && m.not_before !== undefined)
    throw new ApiError('invalid_request', `${where}: give delay or not_before, not both`);
  const at = m.not_before === undefined ? undefined : Date.parse(m.not_before);
  if (Number.isNaN(at)) throw new ApiError('invalid_request', `${where}.not_before is not a valid time`);
  return {
    b: m.body,
    n: encoding,
    a: m.attributes ?? {},
    g: m.group,
    u: m.dedup_id,
    delay: m.delay === undefined ? undefined : Math.round(m.delay * 1000),
    at,
  };
}

export async function send(
  store: Store,
  name: string,
  messages: MessageInput[],
  maxBytes: number,
  idem?: Idempotency,
): Promise<{ id: string; duplicate: boolean }[]> {
  const items = messages.map((m, i) => item(m, i, maxBytes));
  const reply = String(await callQueue(store, name, 'queueSend', [JSON.stringify(items)], idem));
  if (reply.startsWith('too_late')) {
    const index = Number(reply.split(' ')[1]);
    throw new ApiError(
      'invalid_request',
      `messages[${index}] is delayed beyond the queue's max_delay: nothing was sent`,
      { details: { index } },
    );
  }
  return parsed(reply);
}

export type SettleMode = 'ack' | 'nack' | 'extend';

/** Per receipt: acked / retrying / dead / extended, or stale (a newer delivery, or settled) / unknown. */
export async function settle(
  store: Store,
  name: string,
  mode: SettleMode,
  receipts: string[],
  options: { delayMs?: number; error?: string },
  idem?: Idempotency,
): Promise<Record<string, unknown>[]> {
  const parsedReceipts = receipts.map(fromReceipt);
  const items = parsedReceipts.flatMap((r) =>
    r ? [{ ...r, d: options.delayMs ?? -1, x: options.error, j: Math.random() }] : [],
  );
  const results = items.length
    ? list(
        parsed<Record<string, number | string>[]>(
          await callQueue(store, name, 'queueSettle', [mode, JSON.stringify(items)], idem),
        ),
      )
    : [];
  let next = 0;
  return receipts.map((receipt, i) => {
    const result = parsedReceipts[i] ? results[next++] : { status: 'unknown' };
    const out: Record<string, unknown> = { receipt, status: result?.status };
    if (typeof result?.lease_expires_at === 'number') out.lease_expires_at = iso(result.lease_expires_at);
    if (typeof result?.retry_at === 'number') out.retry_at = iso(result.retry_at);
    return out;
  });
}
