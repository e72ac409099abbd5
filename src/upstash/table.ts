// The server's own command table (COMMAND), loaded once per app: flags, ACL categories and key specs of each command.
import type { RedisClient } from '../redis/client';

/** Where the first key of a key spec is (Redis's begin_search). */
export type BeginSearch =
  | { readonly type: 'index'; readonly index: number }
  | { readonly type: 'keyword'; readonly keyword: string; readonly startfrom: number }
  | { readonly type: 'unknown' };

/** How many keys follow it (Redis's find_keys). */
export type FindKeys =
  | { readonly type: 'range'; readonly lastkey: number; readonly keystep: number; readonly limit: number }
  | {
      readonly type: 'keynum';
      readonly keynumidx: number;
      readonly firstkey: number;
      readonly keystep: number;
    }
  | { readonly type: 'unknown' };

export interface KeySpec {
  readonly begin: BeginSearch;
  readonly find: FindKeys;
  /** Redis says the spec may miss keys (INCOMPLETE), or cannot tell them at all (unknown). */
  readonly exact: boolean;
}

export interface CommandSpec {
  /** Lower case; a subcommand as 'client|kill'. */
  readonly name: string;
  readonly arity: number;
  readonly flags: ReadonlySet<string>;
  readonly categories: ReadonlySet<string>;
  readonly keySpecs: readonly KeySpec[];
  readonly subcommands: ReadonlyMap<string, CommandSpec>;
}

type Flat = unknown[];

/** Redis answers maps as flat [name, value, ...] arrays in RESP2. */
function fields(flat: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!Array.isArray(flat)) return out;
  for (let i = 0; i + 1 < flat.length; i += 2) out[String(flat[i])] = flat[i + 1];
  return out;
}

function beginSearch(raw: unknown): BeginSearch {
  const { type, spec } = fields(raw);
  const s = fields(spec);
  if (type === 'index') return { type, index: Number(s.index) };
  if (type === 'keyword') return { type, keyword: String(s.keyword), startfrom: Number(s.startfrom) };
  return { type: 'unknown' };
}

function findKeys(raw: unknown): FindKeys {
  const { type, spec } = fields(raw);
  const s = fields(spec);
  if (type === 'range')
    return { type, lastkey: Number(s.lastkey), keystep: Number(s.keystep), limit: Number(s.limit) };
  if (type === 'keynum')
    return { type, keynumidx: Number(s.keynumidx), firstkey: Number(s.firstkey), keystep: Number(s.keystep) };
  return { type: 'unknown' };
}

function keySpec(raw: unknown): KeySpec {
  const f = fields(raw);
  const begin = beginSearch(f.begin_search);
  const find = findKeys(f.find_keys);
  const flags = Array.isArray(f.flags) ? f.flags.map(String) : [];
  const exact = begin.type !== 'unknown' && find.type !== 'unknown' && !flags.includes('incomplete');
  return { begin, find, exact };
}

function commandSpec(raw: Flat): CommandSpec {
  const [name, arity, flags, , , , categories, , specs, subs] = raw;
  const subcommands = new Map<string, CommandSpec>();
  for (const sub of Array.isArray(subs) ? subs : []) {
    const spec = commandSpec(sub as Flat);
    subcommands.set(spec.name, spec);
  }
  return {
    name: String(name).toLowerCase(),
    arity: Number(arity),
    flags: new Set((flags as unknown[]).map(String)),
    categories: new Set((categories as unknown[] | undefined)?.map(String) ?? []),
    keySpecs: Array.isArray(specs) ? specs.map(keySpec) : [],
    subcommands,
  };
}

export class CommandTable {
  private constructor(private readonly commands: ReadonlyMap<string, CommandSpec>) {}

  static async load(redis: RedisClient): Promise<CommandTable> {
    const reply = (await redis.call('COMMAND')) as Flat[];
    const commands = new Map<string, CommandSpec>();
    for (const raw of reply) {
      if (!Array.isArray(raw)) continue;
      const spec = commandSpec(raw);
      commands.set(spec.name, spec);
    }
    return new CommandTable(commands);
  }

  /** The command (or its subcommand) that `args` run; undefined for a command or subcommand Redis does not know. */
  find(args: readonly string[]): CommandSpec | undefined {
    const top = this.commands.get((args[0] ?? '').toLowerCase());
    if (!top || top.subcommands.size === 0) return top;
    const sub = args[1];
    // A container without its subcommand: Redis answers the arity error itself.
    if (sub === undefined) return top;
    return top.subcommands.get(`${top.name}|${sub.toLowerCase()}`);
  }
}
