// The reply budget on /upstash (SVC_MAX_REPLY_ELEMENTS / _BYTES): reads whose reply size depends on the data are
// sized in Redis before their reply is built (upstash-bounded-n.lua); counts given as arguments are checked here.
import { Cluster } from 'ioredis';
import { withDeadline } from '../engine/send';
import { ApiError } from '../errors';
import { masterNodes } from '../redis/client';
import type { Store } from '../redis/store';
import type { Planned } from './plan';

export interface Budget {
  readonly elements: number;
  readonly bytes: number;
}

/** Read commands (never writes) whose reply grows with the data, and how upstash-bounded-n.lua sizes them. */
const KINDS: Readonly<Record<string, string>> = {
  get: 'strings',
  mget: 'strings',
  getrange: 'getrange',
  substr: 'getrange',
  hgetall: 'hash',
  hkeys: 'hash',
  hvals: 'hash',
  smembers: 'set',
  sunion: 'sets',
  sinter: 'sets',
  sdiff: 'sets',
  zunion: 'zsets',
  zinter: 'zsets',
  zdiff: 'zsets',
  lrange: 'list',
  zrange: 'zrange',
  zrevrange: 'zrange',
  zrangebyscore: 'zrange',
  zrevrangebyscore: 'zrange',
  zrangebylex: 'zrange',
  zrevrangebylex: 'zrange',
  xrange: 'stream',
  xrevrange: 'stream',
  keys: 'keys',
};

/**
 * The kind of a bounded read, or undefined for a command answered as it is. A wrong number of arguments goes to
 * Redis as it is (it reads nothing), so that its error keeps Redis's text rather than the script's.
 */
export function sizeKind(planned: Planned): string | undefined {
  const { arity } = planned.spec;
  const count = planned.args.length;
  if (arity >= 0 ? count !== arity : count < -arity) return undefined;
  return planned.writes ? undefined : KINDS[planned.name];
}

/** Above this many words, a command is sized by the script and then sent as it is (Lua's unpack limit). */
const SCRIPT_MAX_ARGS = 7000;

/** A bounded read too long to run inside the script: sized in a call of its own first (two round trips). */
export function sizedApart(planned: Planned): boolean {
  return sizeKind(planned) !== undefined && planned.args.length > SCRIPT_MAX_ARGS;
}

/** The script call's arguments: key count, keys, kind, mode, the command. */
export function boundedArgs(planned: Planned, mode: 'run' | 'size'): (string | number)[] {
  return [planned.keys.length, ...planned.keys, sizeKind(planned) as string, mode, ...planned.args];
}

/** Argument positions of a count that sets the reply's size whatever the data (SCAN's COUNT, a random pick's count). */
function argumentCount(planned: Planned): number {
  const { name, args } = planned;
  let n = 0;
  if (name === 'srandmember' || name === 'hrandfield' || name === 'zrandmember')
    n = Math.abs(Number(args[2] ?? 0)) * (args.some((a) => /^(withscores|withvalues)$/i.test(a)) ? 2 : 1);
  else if (name === 'scan' || name === 'hscan' || name === 'sscan' || name === 'zscan') {
    const at = args.findIndex((a, i) => i >= 2 && a.toLowerCase() === 'count');
    n = at < 0 ? 0 : Number(args[at + 1] ?? 0);
  }
  // A malformed count is Redis's to refuse.
  return Number.isFinite(n) ? n : 0;
}

export function tooLarge(elements: number, bytes: number, budget: Budget): ApiError {
  return new ApiError(
    'reply_too_large',
    `ERR reply too large: at least ${elements} elements or ${bytes} bytes, above the limits of ${budget.elements} elements and ${budget.bytes} bytes per request (SVC_MAX_REPLY_ELEMENTS, SVC_MAX_REPLY_BYTES): read in parts with SCAN / HSCAN / SSCAN / ZSCAN, a smaller range, or COUNT / LIMIT`,
  );
}

/** A REPLY_TOO_LARGE refusal of upstash-bounded-n.lua as the request's 413. */
export function refusal(err: Error | null, budget: Budget): ApiError | undefined {
  if (!err?.message.startsWith('REPLY_TOO_LARGE ')) return undefined;
  const [, elements, bytes] = err.message.split(' ');
  return tooLarge(Number(elements), Number(bytes), budget);
}

/** A count given as an argument above the budget: 413 at once (no round trip, nothing awaited). */
export function checkArguments(planned: Planned, budget: Budget): void {
  const counted = argumentCount(planned);
  if (counted > budget.elements) throw tooLarge(counted, 0, budget);
}

/** What one command would read: [elements, bytes]. */
async function sizeOf(store: Store, planned: Planned): Promise<[number, number]> {
  const counted = argumentCount(planned);
  if (!sizeKind(planned)) return [counted, 0];
  if (planned.name === 'keys' && store.redis instanceof Cluster) {
    const sizes = await Promise.all(
      masterNodes(store.redis).map((node) => withDeadline(node.dbsize(), store.deadlineMs)),
    );
    return [sizes.reduce((a, b) => a + b, 0), 0];
  }
  const reply = await withDeadline(
    store.redis.upstashBounded(...(boundedArgs(planned, 'size') as [number, ...string[]])),
    store.deadlineMs,
  ).catch(() => [0, 0]);
  return reply as [number, number];
}

/**
 * The whole request's reads (a pipeline, a transaction, KEYS on a Cluster) within the budget, or 413 before anything
 * runs. Sized in one round trip per data-dependent read (in parallel); commands of other kinds cost nothing here.
 * It also loads upstash-bounded-n.lua into Redis's script cache before a pipeline runs, so that its EVALSHA is not
 * answered NOSCRIPT and sent again after the commands that follow it (ioredis's fallback would reorder them).
 */
export async function checkBudget(store: Store, planned: Planned[], budget: Budget): Promise<void> {
  const sized = planned.filter((p) => sizeKind(p) || argumentCount(p) !== 0);
  if (sized.length === 0) return;
  const sizes = await Promise.all(sized.map((p) => sizeOf(store, p)));
  const elements = sizes.reduce((a, [e]) => a + e, 0);
  const bytes = sizes.reduce((a, [, b]) => a + b, 0);
  if (elements > budget.elements || bytes > budget.bytes) throw tooLarge(elements, bytes, budget);
}
