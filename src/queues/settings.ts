// A queue's settings: the request's (seconds, JSON) <-> the settings hash's fields (milliseconds), with defaults.

export type Backoff =
  | { type: 'fixed'; delay: number }
  | { type: 'exponential'; base: number; cap: number; jitter: boolean }
  | { type: 'schedule'; delays: number[] };

export interface QueueSettings {
  visibility_timeout: number;
  max_deliveries: number;
  backoff: Backoff;
  retention: number;
  max_delay: number;
  dedup_window: number;
}

/** A new queue's settings where the request names none (seconds). */
export const DEFAULTS: QueueSettings = {
  visibility_timeout: 30,
  max_deliveries: 5,
  backoff: { type: 'exponential', base: 1, cap: 300, jitter: true },
  retention: 14 * 86400,
  max_delay: 30 * 86400,
  dedup_window: 300,
};

const SECONDS = ['visibility_timeout', 'retention', 'max_delay', 'dedup_window'] as const;
const ms = (seconds: number) => Math.round(seconds * 1000);

function backoffMs(b: Backoff): Backoff {
  if (b.type === 'fixed') return { type: 'fixed', delay: ms(b.delay) };
  if (b.type === 'schedule') return { type: 'schedule', delays: b.delays.map(ms) };
  return { type: 'exponential', base: ms(b.base), cap: ms(b.cap), jitter: b.jitter };
}

function backoffSeconds(b: Backoff): Backoff {
  const s = (v: number) => v / 1000;
  if (b.type === 'fixed') return { type: 'fixed', delay: s(b.delay) };
  if (b.type === 'schedule') return { type: 'schedule', delays: b.delays.map(s) };
  return { type: 'exponential', base: s(b.base), cap: s(b.cap), jitter: b.jitter };
}

/** The settings hash's field, value pairs of the settings `s` gives. */
export function toFields(s: Partial<QueueSettings>): string[] {
  const out: string[] = [];
  for (const name of SECONDS) if (s[name] !== undefined) out.push(name, String(ms(s[name] as number)));
  if (s.max_deliveries !== undefined) out.push('max_deliveries', String(s.max_deliveries));
  if (s.backoff !== undefined) out.push('backoff', JSON.stringify(backoffMs(s.backoff)));
  return out;
}

/** The settings as the API shows them, from the hash's flat [field, value, ...]. */
export function fromFields(flat: string[]): QueueSettings & { created_at: string } {
  const h: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) h[flat[i] as string] = flat[i + 1] as string;
  const seconds = (name: string) => Number(h[name]) / 1000;
  return {
    visibility_timeout: seconds('visibility_timeout'),
    max_deliveries: Number(h.max_deliveries),
    backoff: backoffSeconds(JSON.parse(h.backoff ?? '{}') as Backoff),
    retention: seconds('retention'),
    max_delay: seconds('max_delay'),
    dedup_window: seconds('dedup_window'),
    created_at: new Date(Number(h.created)).toISOString(),
  };
}
