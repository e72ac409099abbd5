// Upstash-Encoding: base64: every string of a result base64-encoded (UTF-8) except the `OK` status; arrays recursively.

/** Integers and null stay as they are; the SDK decodes each string it finds (and leaves `OK` alone). */
export function encodeBase64(value: unknown): unknown {
  if (typeof value === 'string')
    return value === 'OK' ? value : Buffer.from(value, 'utf8').toString('base64');
  if (Array.isArray(value)) return value.map(encodeBase64);
  return value;
}
