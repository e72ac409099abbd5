// Values as any bytes: `encoding: base64` on writes and reads, and the 422 binary_value of a read that is not UTF-8.
//
// Inside an operation a value given in base64 is a "byte string": one character per byte (latin1), so that the
// operations' code (object keys, Sets, slices) keeps working on strings; commands marked `bytes` send their string
// arguments as those bytes, and commands marked `buffers` get Buffer replies, which become byte strings before the
// operation reads them. The operation's `values` (the answer's fields that hold stored values) are then encoded.
import { isUtf8 } from 'node:buffer';
import { decodeCanonical } from '../base64';
import { ApiError } from '../errors';
import { type Command, changed, type Op, type Outcome } from './op';

/**
 * `base64`: values travel as base64 both ways. `text` (the default): UTF-8 text, or 422 for a value that is not.
 * `bytes`: the input holds byte strings already and the answer keeps them (raw application/octet-stream strings).
 */
export type Encoding = 'text' | 'base64' | 'bytes';

/** The request's encoding: a write's body field, a read's `?encoding=`, a batch's (or its item's) field. */
export const encodingOf = (value: unknown): Encoding => (value === 'base64' ? 'base64' : 'text');

const binaryValue = () =>
  new ApiError(
    'binary_value',
    'A value to answer is not valid UTF-8 text: ask for it with encoding=base64 (a query parameter on reads, ' +
      '"encoding": "base64" in a body), or for a string with Accept: application/octet-stream',
  );

/**
 * A text answer held U+FFFD, which is what ioredis makes of bytes that are not UTF-8: the operation (a read) is
 * run again with Buffer replies to tell a stored U+FFFD (answered) from bytes that are not text (422).
 */
export class Reread extends ApiError {
  constructor() {
    super('binary_value', 'A value may not be UTF-8 text; read again as bytes');
  }
}

/** Canonical base64 text -> a byte string (else 400 naming `what`); the size limit applies to the decoded bytes. */
export function fromBase64(text: string, maxBytes: number, what = 'value'): string {
  const bytes = decodeCanonical(text);
  if (bytes === undefined) {
    throw new ApiError(
      'invalid_value',
      `The ${what} is not canonical base64 (RFC 4648, with or without padding, unused bits zero)`,
    );
  }
  if (bytes.length > maxBytes) {
    throw new ApiError(
      'payload_too_large',
      `The ${what} is ${bytes.length} bytes once decoded; the limit is ${maxBytes} bytes`,
    );
  }
  return bytes.toString('latin1');
}

/**
 * The fields of an input that hold values (hash field names and set members too), each string through `convert`
 * (given the string and the field's name for messages).
 */
function mapInput<T extends Record<string, unknown>>(
  input: T,
  convert: (text: string, what: string) => string,
): T {
  const out: Record<string, unknown> = { ...input };
  const one = (text: unknown, what: string) => convert(String(text), what);
  for (const name of ['value', 'field', 'member'] as const) {
    if (typeof input[name] === 'string') out[name] = one(input[name], name);
  }
  for (const name of ['values', 'members', 'fields'] as const) {
    const value = input[name];
    if (Array.isArray(value)) out[name] = value.map((v, i) => one(v, `${name}[${i}]`));
    else if (value !== null && typeof value === 'object') {
      // A hash's fields (names and values), a sorted set's members (names; the scores are numbers).
      const decoded = Object.create(null) as Record<string, unknown>;
      for (const [k, v] of Object.entries(value)) {
        const entry = name === 'fields' ? one(v, `${name}.${k.slice(0, 100)}`) : v;
        Object.defineProperty(decoded, one(k, `name in ${name}`), {
          value: entry,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      out[name] = decoded;
    }
  }
  return out as T;
}

/** The fields of an input that hold values, in base64: their byte strings. */
export const decodeInput = <T extends Record<string, unknown>>(input: T, maxBytes: number): T =>
  mapInput(input, (text, what) => fromBase64(text, maxBytes, what));

/** The fields of an input that hold values, as text: the byte strings of their UTF-8 (a read again as bytes). */
export const textAsBytes = <T extends Record<string, unknown>>(input: T): T =>
  mapInput(input, (text) => Buffer.from(text, 'utf8').toString('latin1'));

/** Raw bytes (an application/octet-stream body) -> a byte string. */
export const fromBytes = (bytes: Buffer): string => bytes.toString('latin1');

/** A byte string's bytes. */
export const toBytes = (value: string): Buffer => Buffer.from(value, 'latin1');

/**
 * Converts every byte string of a stored value: a string, an array of them, a sorted set's {member, score} pairs
 * (the member only), a hash's fields (names and values; own properties, '__proto__' included).
 */
function mapValue(value: unknown, convert: (s: string) => string): unknown {
  if (typeof value === 'string') return convert(value);
  if (Array.isArray(value)) {
    return value.map((v) =>
      v !== null && typeof v === 'object'
        ? { ...v, member: convert(String(v.member)) }
        : mapValue(v, convert),
    );
  }
  if (value !== null && typeof value === 'object') {
    const out = Object.create(null) as Record<string, unknown>;
    for (const [name, v] of Object.entries(value)) {
      const converted = typeof v === 'string' ? convert(v) : v;
      Object.defineProperty(out, convert(name), {
        value: converted,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}

const base64 = (s: string) => toBytes(s).toString('base64');
const strictText = (s: string) => {
  const bytes = toBytes(s);
  if (!isUtf8(bytes)) throw binaryValue();
  return bytes.toString('utf8');
};
/** Whether a text value (at any depth: names of a hash's fields too) holds U+FFFD. Reads only, no copy. */
function suspicious(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\uFFFD');
  if (Array.isArray(value)) return value.some(suspicious);
  if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    for (const name of Object.keys(object)) if (suspicious(name) || suspicious(object[name])) return true;
  }
  return false;
}

/** Buffer replies -> byte strings, as the operation's code reads them. */
function byteStrings(reply: unknown): unknown {
  if (Buffer.isBuffer(reply)) return reply.toString('latin1');
  if (Array.isArray(reply)) return reply.map(byteStrings);
  return reply;
}

function convertOutcome(
  outcome: Outcome,
  fields: readonly string[],
  convert: (s: string) => string,
): Outcome {
  const body = { ...outcome.body };
  for (const field of fields) if (field in body) body[field] = mapValue(body[field], convert);
  return { ...outcome, body };
}

const marked = (c: Command, bytes: boolean): Command => ({
  ...c,
  buffers: true,
  ...(bytes ? { bytes } : {}),
});

/** `op` reading (and, given `bytes`, writing) byte strings; its value fields converted by `convert`. */
function asBytes(op: Op, bytes: boolean, convert: (s: string) => string): Op {
  const fields = op.values ?? [];
  const { whenEmpty } = op;
  return changed(op, {
    commands: op.commands.map((c) => marked(c, bytes)),
    result: (replies) => convertOutcome(op.result(replies.map(byteStrings)), fields, convert),
    // A list pop's wait (list-wait.ts) reads its items as bytes too.
    ...(whenEmpty && {
      whenEmpty: async (store, abandoned, client, block) =>
        convertOutcome(await whenEmpty(store, abandoned, client, block, true), fields, convert),
    }),
  });
}

/**
 * `op` under an encoding. base64: arguments and replies as bytes, values answered in base64. text: a read whose
 * answer may hold bytes that are not UTF-8 is checked (Reread, then `strict`); a pop (it cannot be run again)
 * reads bytes at once and answers 422 for a value that is not text. `rebuilt` builds the same operation from the
 * input's byte strings (textAsBytes), for the read again: the names it echoes (a path's field or member) are then
 * byte strings like the replies, not text that `strict` would misread.
 */
export function withEncoding(op: Op, encoding: Encoding, rebuilt?: () => Op): Op {
  if (encoding === 'base64') return asBytes(op, true, base64);
  if (encoding === 'bytes') return asBytes(op, true, (s) => s);
  const fields = op.values;
  if (!fields || fields.length === 0) return op;
  if (op.writes) return op.pops ? asBytes(op, false, strictText) : op;
  return changed(op, {
    result: (replies) => {
      const outcome = op.result(replies);
      if (fields.some((field) => suspicious(outcome.body[field]))) throw new Reread();
      return outcome;
    },
    reread: () => (rebuilt ? asBytes(rebuilt(), true, strictText) : asBytes(op, false, strictText)),
  });
}
