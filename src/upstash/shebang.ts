// Scripts written for Upstash: the `allow-key-locking` shebang flag (@upstash/ratelimit 2.1+) dropped for Redis.
import { createHash } from 'node:crypto';

/** Remembered script digests, at most: the oldest is forgotten first. */
const MAX_SCRIPTS = 1000;

const FLAGGED = /^#!lua([^\n]*?)\bflags=([^\s\n]*)/;
const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

/**
 * Upstash accepts `#!lua flags=allow-key-locking`; Redis refuses a flag it does not know ("Unexpected flag in script
 * shebang"). Scripts are atomic in Redis anyway, so the flag is dropped from EVAL's script, and the digest the client
 * computed from its own text is remembered, so that its next EVALSHA finds the script Redis knows.
 */
export class ScriptFlags {
  private readonly digests = new Map<string, string>();

  /** Rewrites EVAL / EVAL_RO's script or EVALSHA / EVALSHA_RO's digest in `args` (the command's arguments). */
  rewrite(name: string, args: string[]): void {
    const body = args[1];
    if (body === undefined) return;
    if (name === 'evalsha' || name === 'evalsha_ro') {
      args[1] = this.digests.get(body.toLowerCase()) ?? body;
      return;
    }
    if (name !== 'eval' && name !== 'eval_ro') return;
    const m = FLAGGED.exec(body);
    if (!m || !(m[2] as string).split(',').includes('allow-key-locking')) return;
    const flags = (m[2] as string).split(',').filter((f) => f !== 'allow-key-locking' && f !== '');
    const shebang = `#!lua${m[1]}${flags.length > 0 ? `flags=${flags.join(',')}` : ''}`;
    const rewritten = shebang.trimEnd() + body.slice(m[0].length);
    if (this.digests.size >= MAX_SCRIPTS) this.digests.delete(this.digests.keys().next().value as string);
    this.digests.set(sha1(body), sha1(rewritten));
    args[1] = rewritten;
  }
}
