// Best effort: keys Redis itself expires or evicts, from keyspace notifications, as `expired` / `evicted` events.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../observability/logger';
import { eventArgs } from '../redis/change-event';
import { duplicate, type RedisClient } from '../redis/client';
import { INTERNAL_PREFIX, type Keyspace } from '../redis/keys';

/** How long the notifier's lock lasts, and how often its holder renews it (another instance takes over after). */
const LOCK_MS = 10_000;
const RENEW_MS = 3_000;
/** Renews the lock only while this instance holds it. */
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;

/** notify-keyspace-events allows keyevent notifications of expirations ('x') or evictions ('e'). */
function allowed(flags: string): boolean {
  return flags.includes('E') && (flags.includes('A') || flags.includes('x') || flags.includes('e'));
}

/**
 * With SVC_CHANGES_EXPIRED: one instance of the service (its SVC_KEY_PREFIX) at a time, holding a lock under #svc:,
 * subscribes to `__keyevent@<db>__:expired`
 * and `:evicted` and appends an event for each key under SVC_KEY_PREFIX (type '', operation `expired` or `evicted`).
 * Best effort: Redis's notifications are fire-and-forget, so one sent while no instance listens (a restart, the
 * lock changing hands) is lost, and the event comes after the expiry, not with it. Needs the server's
 * `notify-keyspace-events` to include `E` and `x` / `e` (the service never changes the server's configuration).
 */
export class Expirations {
  private readonly id = randomUUID();
  private readonly lock: string;
  private timer: NodeJS.Timeout | undefined;
  private listener: RedisClient | undefined;
  private warned = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly keyspace: Keyspace,
    private readonly stream: () => { key: string; maxlen: number },
    private readonly logger: Logger,
  ) {
    this.lock = keyspace.internal('changes-notifier', keyspace.prefix);
  }

  start(): void {
    const tick = () => {
      this.renew().finally(() => {
        if (this.timer) this.timer = setTimeout(tick, RENEW_MS);
      });
    };
    this.timer = setTimeout(tick, 0);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.listener?.disconnect();
    this.listener = undefined;
  }

  /** Takes or renews the lock; subscribes while holding it, lets go when it is lost. */
  private async renew(): Promise<void> {
    try {
      const held =
        this.listener !== undefined && (await this.redis.eval(RENEW, 1, this.lock, this.id, LOCK_MS)) === 1;
      const taken = held || (await this.redis.set(this.lock, this.id, 'PX', LOCK_MS, 'NX')) === 'OK';
      if (taken && !this.listener) await this.listen();
      if (!taken) this.stopListening();
    } catch {
      // Redis unreachable: try again at the next tick; the lock expires meanwhile if this instance held it.
    }
  }

  private stopListening(): void {
    this.listener?.disconnect();
    this.listener = undefined;
  }

  private async listen(): Promise<void> {
    const [, flags = ''] = (await this.redis.config('GET', 'notify-keyspace-events')) as string[];
    if (!allowed(flags)) {
      if (!this.warned)
        this.logger.warn('SVC_CHANGES_EXPIRED: the server sends no expiry notifications', { flags });
      this.warned = true;
      return;
    }
    const db = (this.redis.options as { db?: number }).db ?? 0;
    const listener = duplicate(this.redis, {});
    listener.on('error', () => {});
    this.listener = listener;
    listener.on('message', (channel: string, key: string) => this.append(channel, key));
    await listener.connect();
    await listener.subscribe(`__keyevent@${db}__:expired`, `__keyevent@${db}__:evicted`);
  }

  private append(channel: string, redisKey: string): void {
    const { prefix } = this.keyspace;
    if (!redisKey.startsWith(prefix) || redisKey.startsWith(INTERNAL_PREFIX)) return;
    const op = channel.endsWith(':evicted') ? 'evicted' : 'expired';
    const { key, maxlen } = this.stream();
    const user = this.keyspace.fromRedis(redisKey);
    this.redis.xadd(key, ...eventArgs(maxlen, { key: user, type: '', op })).catch(() => {});
  }
}
