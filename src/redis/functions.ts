// Our scripts as one Redis Functions library (issue 36): loaded once per server (FUNCTION LOAD REPLACE at each
// connection's ready, again when Redis says it is missing), called with FCALL; EVALSHA where FUNCTION is refused.
import { createHash } from 'node:crypto';
import { Cluster, type Redis } from 'ioredis';

/** How our scripts run on a client: 'functions' (FCALL), 'scripts' (EVALSHA), 'pending' until the first load. */
export type ScriptMode = 'functions' | 'scripts' | 'pending';

/** The scripts that run as functions, by ioredis name: each body, and whether it writes (else it gets no-writes). */
export interface FunctionSource {
  /** Lua before the functions: the feed and budget settings, the shared library (typed.lua). */
  readonly prelude: string;
  /** Lua at the start of each read's call: resets typed.lua's per-call state (a library's locals live between calls). */
  readonly readCall: string;
  /** The same for a write's: on a Cluster with the feed on it also takes the stream off ARGV (or returns an error). */
  readonly writeCall: string;
  /** `writes` false: a no-writes function; `feed`: its call starts with writeCall (it is named a stream on a Cluster). */
  readonly bodies: Readonly<
    Record<string, { readonly lua: string; readonly writes: boolean; readonly feed: boolean }>
  >;
}

interface Library {
  readonly code: string;
  /** The FCALL name of each script, by ioredis name. */
  readonly names: ReadonlyMap<string, string>;
  /** How many keys each call names first: a number, or 'first' (the call's first argument says). */
  readonly keyCounts: ReadonlyMap<string, number | 'first'>;
}

interface State {
  mode: ScriptMode;
  readonly library: Library;
  /** The load under way, so that concurrent misses load once. */
  loading?: Promise<void>;
}

const states = new WeakMap<object, State>();

/**
 * The library's code. Its name and its functions' names carry a digest of the code: gateways with other settings
 * (prefix, budget, feed) load libraries of their own beside it instead of replacing each other's.
 */
function library(source: FunctionSource, keyCounts: Map<string, number | 'first'>): Library {
  const digest = createHash('sha1')
    .update(source.prelude + source.readCall + source.writeCall + JSON.stringify(source.bodies))
    .digest('hex')
    .slice(0, 12);
  const names = new Map<string, string>();
  const registered = Object.entries(source.bodies).map(([name, { lua, writes, feed }]) => {
    const fn = `svc_${digest}_${name}`;
    names.set(name, fn);
    // Reads declare no-writes (FCALL_RO-safe); writes may reach the feed's stream in another slot of the node.
    const flags = writes ? "{'allow-cross-slot-keys'}" : "{'no-writes', 'allow-cross-slot-keys'}";
    return `redis.register_function{function_name = '${fn}', flags = ${flags}, callback = function(KEYS, ARGV)
${feed ? source.writeCall : source.readCall}
${lua}
end}`;
  });
  const code = `#!lua name=svc_${digest}\n${source.prelude}\n${registered.join('\n')}\n`;
  return { code, names, keyCounts };
}

/** The primaries that must hold the library: the connection's server, or every Cluster master. */
function primaries(redis: Redis | Cluster): Redis[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

/** Loads the library on every primary; the mode becomes 'scripts' when a server refuses FUNCTION (Redis < 7, ACL, renamed). */
async function load(redis: Redis | Cluster, state: State): Promise<void> {
  if (state.loading) return state.loading;
  state.loading = (async () => {
    const code = state.library.code;
    const loads = await Promise.allSettled(
      primaries(redis).map((node) => node.call('FUNCTION', 'LOAD', 'REPLACE', code)),
    );
    const errors = loads.flatMap((l) => (l.status === 'rejected' ? [l.reason as Error] : []));
    // Refused (unknown command, NOPERM, a renamed command, our code rejected): EVALSHA until the next ready. Not
    // reachable, or not now (a replica, loading): as before, and the next ready or miss tries again.
    if (errors.some((err) => err.name === 'ReplyError' && !TRANSIENT.test(err.message)))
      state.mode = 'scripts';
    else if (errors.length < loads.length) state.mode = 'functions';
    state.loading = undefined;
  })();
  return state.loading;
}

/** Refusals that say "not now" rather than "never": the mode stays as it was. */
const TRANSIENT = /^(READONLY|LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN)/;

/**
 * Runs our scripts as functions on `redis` where the server allows: the library is loaded at every ready (a restart
 * without persistence, a Sentinel failover, a reconnect) and whenever a call finds it missing (see reloaded).
 */
export function useFunctions(
  redis: Redis | Cluster,
  source: FunctionSource,
  keyCounts: Map<string, number | 'first'>,
): void {
  const state: State = { mode: 'pending', library: library(source, keyCounts) };
  states.set(redis, state);
  redis.on('ready', () => void load(redis, state));
}

/** How our scripts run on `redis` (for /store/admin/info). */
export function scriptMode(redis: object): ScriptMode {
  return states.get(redis)?.mode ?? 'scripts';
}

/**
 * The FCALL that stands for a call of script `name` (an ioredis method, `...Buffer` for Buffer replies) with the
 * arguments its method takes, or undefined: run the script (EVALSHA), as when FUNCTION is unavailable.
 */
export function asFunction(redis: object, name: string, args: unknown[]): [string, unknown[]] | undefined {
  const state = states.get(redis);
  if (state?.mode !== 'functions') return undefined;
  const buffers = name.endsWith('Buffer');
  const script = buffers ? name.slice(0, -'Buffer'.length) : name;
  // A read under If-Match ('r...') runs as a read: a no-writes function is not refused when Redis is out of memory.
  const read = script === 'typedEtag' && String(args[1]).startsWith('r');
  const fn = state.library.names.get(read ? 'typedEtagRead' : script);
  const keys = state.library.keyCounts.get(script);
  if (!fn || keys === undefined) return undefined;
  return [buffers ? 'fcallBuffer' : 'fcall', keys === 'first' ? [fn, ...args] : [fn, keys, ...args]];
}

/** Whether an FCALL failed because the server lacks the library (FUNCTION FLUSH, a new master, a restart). */
export const libraryMissing = (err: Error | null): boolean =>
  err?.message.startsWith('ERR Function not found') === true;

/** After a miss: loads the library again (every primary), and tells whether the call may be sent again as it was. */
export async function reloaded(redis: object): Promise<boolean> {
  const state = states.get(redis);
  if (!state) return false;
  await load(redis as Redis | Cluster, state);
  return true;
}
