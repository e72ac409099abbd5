// ioredis's ready check, quiet on a server that refuses INFO (a managed Redis's ACL or renamed command).
import type Redis from 'ioredis';
import { refusalReason } from '../errors';

type ReadyCheck = (callback: (err: Error | null, info?: unknown) => void) => void;

/**
 * ioredis's ready check (INFO, to wait while Redis loads its data) on a server that refuses INFO (a managed Redis's
 * ACL or renamed command): ready at once, without ioredis's console warning per connection (NOPERM) or its endless
 * reconnects (unknown command). The capability probe reports the refusal once (capabilities.ts); a server still
 * loading answers LOADING, which is a 503 like any other.
 */
export function quietReadyCheck(redis: Redis): Redis {
  const check: ReadyCheck = (callback) => {
    redis.info().then(
      (text) => {
        // As ioredis: `field:value` lines; while loading, asked again after the ETA (Sentinel checks `role`).
        const info = Object.fromEntries(
          String(text)
            .split('\r\n')
            .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)]),
        );
        if (!info.loading || info.loading === '0') return callback(null, info);
        setTimeout(() => check(callback), (Number(info.loading_eta_seconds) || 1) * 1000);
      },
      (err: Error) => (refusalReason(err) ? callback(null, {}) : callback(err)),
    );
  };
  (redis as unknown as { _readyCheck: ReadyCheck })._readyCheck = check;
  return redis;
}
