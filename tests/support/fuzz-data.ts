// The data fuzzer's generators: names and values of any bytes, non-canonical base64, /upstash command sequences
// on a few keys, and keys of any allowed length for walks.
import fc from 'fast-check';

/** Bytes that stress text handling: U+FFFD's UTF-8, latin1-looking bytes, a BOM, invalid sequences, NUL. */
const TRICKY = [
  [0xef, 0xbf, 0xbd],
  [0xc3, 0xa9],
  [0xf0, 0x9d, 0x94, 0x98],
  [0xef, 0xbb, 0xbf],
  [0xff],
  [0xc3],
  [0x00],
  [0x41],
];

/** Any bytes, often built from the tricky pieces above. */
export const bytes = (minLength = 0): fc.Arbitrary<Buffer> =>
  fc
    .oneof(
      fc.uint8Array({ minLength, maxLength: 24 }).map((a) => Buffer.from(a)),
      fc
        .array(fc.constantFrom(...TRICKY), { minLength: Math.max(1, minLength), maxLength: 6 })
        .map((parts) => Buffer.from(parts.flat())),
    )
    .filter((b) => b.length >= minLength);

/** A base64 text that is not the canonical encoding of any bytes (a character added, padding broken, pad bits). */
export const nonCanonical = (valid: Buffer): fc.Arbitrary<string> => {
  const text = valid.toString('base64');
  const options = [`${text}=`, `${text}a`, `${text}!`, `=${text}`, `${text.replace(/=+$/, '')}=`];
  // Non-zero unused bits: the last character before the padding moved by one (Q -> R).
  if (text.endsWith('=')) {
    const at = text.replace(/=+$/, '').length - 1;
    const c = text[at] as string;
    const moved =
      c === 'Z' ? 'a' : c === 'z' ? '0' : c === '9' ? '+' : String.fromCharCode(c.charCodeAt(0) + 1);
    options.push(text.slice(0, at) + moved + text.slice(at + 1));
  }
  return fc.constantFrom(
    ...options.filter((o) => o !== text && o.replace(/=+$/, '') !== text.replace(/=+$/, '')),
  );
};

/** Keys the /upstash sequences use (a few, so that commands meet each other's data). */
export const UPSTASH_KEYS = ['u1', 'u2', 'u3'];
const key = fc.constantFrom(...UPSTASH_KEYS);
const field = fc.constantFrom('f1', 'f2');
/** Integers around the interesting edges: 0, small, 2^53, 2^63. */
const integer = fc.oneof(
  fc.integer({ min: -20, max: 20 }).map(String),
  fc.constantFrom(
    '9007199254740993',
    '-9007199254740993',
    '9223372036854775806',
    '-9223372036854775807',
    '1x',
  ),
);
const value = fc.oneof(integer, fc.constantFrom('', 'v', 'é', '\uFFFD', '\uFEFFv'));

/** One write or read of the counters, strings, hashes and sets, as an /upstash command. */
export const upstashCommand: fc.Arbitrary<string[]> = fc.oneof(
  fc.tuple(fc.constant('SET'), key, value),
  fc.tuple(fc.constant('GET'), key),
  fc.tuple(fc.constantFrom('INCR', 'DECR'), key),
  fc.tuple(fc.constantFrom('INCRBY', 'DECRBY'), key, integer),
  fc.tuple(fc.constant('HINCRBY'), key, field, integer),
  fc.tuple(fc.constant('HSET'), key, field, value),
  fc.tuple(fc.constant('HDEL'), key, field),
  fc.tuple(fc.constant('APPEND'), key, value),
  fc.tuple(fc.constantFrom('SADD', 'SREM'), key, value),
  fc
    .tuple(fc.constantFrom('DEL', 'UNLINK'), fc.uniqueArray(key, { minLength: 1, maxLength: 3 }))
    .map(([name, keys]) => [name, ...keys]),
);

/** Commands after which an event for an unchanged key is right: they always write (SET of the same value). */
export const ALWAYS_WRITES = new Set(['set', 'hset', 'incrby', 'decrby', 'hincrby', 'append']);

/** A key name of the key rule, 1 to 1024 characters, often long. */
export const longKey: fc.Arbitrary<string> = fc
  .tuple(
    fc.stringMatching(/^[A-Za-z0-9_.:-]{1,8}$/),
    fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 200, max: 1000 })),
  )
  .map(([head, pad]) => head + 'x'.repeat(pad));
