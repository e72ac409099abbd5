// Canonical base64 only (RFC 4648 section 3.5 lets a decoder refuse the rest): a text that another encoder could
// not have written (bad characters, misplaced padding, non-zero pad bits: `aR`, `a==`) is refused, never decoded
// to other bytes. Node's own decoder skips what it does not understand.

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * The bytes of `text` when it is the canonical base64 of them, with or without its padding (`aQ==`, `aQ`), or,
 * with `url`, the canonical unpadded base64url; undefined otherwise.
 */
export function decodeCanonical(text: string, url = false): Buffer | undefined {
  if (!(url ? BASE64URL : BASE64).test(text)) return undefined;
  const bytes = Buffer.from(text, url ? 'base64url' : 'base64');
  const again = bytes.toString(url ? 'base64url' : 'base64');
  if (again === text || (!url && !text.endsWith('=') && again.replace(/=+$/, '') === text)) return bytes;
  return undefined;
}
