// The command table: flags, ACL categories and key specs of each command, shipped with the service (commands.json,
// generated from Redis's and Valkey's own command files by scripts/command-table.mjs), plus what the server's
// COMMAND knows beyond it (a module's commands), loaded once per app.
import { refusalReason } from '../errors';
import type { RedisClient } from '../redis/client';
import SHIPPED from './commands.json';

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

/** A shipped key spec ('i1/r0,1,0', 'k-2:KEYS/r-1,1,0!', 'u/u': see scripts/command-table.mjs). */
function shippedKeySpec(text: string): KeySpec {
  const m = /^(?:i(-?\d+)|k(-?\d+):([^/]*)|u)\/(?:r(-?\d+),(\d+),(\d+)|n(\d+),(\d+),(\d+)|u)(!?)$/.exec(text);
  if (!m) throw new Error(`commands.json: bad key spec ${text}`);
  const n = (i: number) => Number(m[i]);
  const begin: BeginSearch =
    m[1] !== undefined
      ? { type: 'index', index: n(1) }
      : m[2] !== undefined
        ? { type: 'keyword', keyword: m[3] as string, startfrom: n(2) }
        : { type: 'unknown' };
  const find: FindKeys =
    m[4] !== undefined
      ? { type: 'range', lastkey: n(4), keystep: n(5), limit: n(6) }
      : m[7] !== undefined
        ? { type: 'keynum', keynumidx: n(7), firstkey: n(8), keystep: n(9) }
        : { type: 'unknown' };
  return { begin, find, exact: begin.type !== 'unknown' && find.type !== 'unknown' && m[10] !== '!' };
}

type Shipped = [number, string, string, string[], Record<string, Shipped>?];

function shippedSpec(name: string, [arity, flags, categories, specs, subs]: Shipped): CommandSpec {
  const words = (text: string) => new Set(text.split(' ').filter((w) => w !== ''));
  return {
    name,
    arity,
    flags: words(flags),
    categories: words(categories),
    keySpecs: specs.map(shippedKeySpec),
    subcommands: new Map(Object.entries(subs ?? {}).map(([sub, e]) => [sub, shippedSpec(sub, e)])),
  };
}

let shipped: ReadonlyMap<string, CommandSpec> | undefined;
/** The shipped table, parsed once per process. */
function shippedTable(): ReadonlyMap<string, CommandSpec> {
  shipped ??= new Map(
    Object.entries(SHIPPED as unknown as Record<string, Shipped>).map(([name, e]) => [
      name,
      shippedSpec(name, e),
    ]),
  );
  return shipped;
}

export class CommandTable {
  private constructor(private readonly commands: ReadonlyMap<string, CommandSpec>) {}

  /**
   * The shipped table, with the commands (and subcommands) the server's COMMAND knows beyond it. A server that
   * refuses COMMAND (Memorystore) or answers it empty (Upstash) leaves the shipped table alone.
   */
  static async load(redis: RedisClient): Promise<CommandTable> {
    const reply = (await redis.call('COMMAND').catch((err: Error) => {
      if (refusalReason(err)) return [];
      throw err;
    })) as Flat[];
    const commands = new Map(shippedTable());
    for (const spec of CommandTable.fromReply(reply).commands.values()) {
      const known = commands.get(spec.name);
      if (!known) commands.set(spec.name, spec);
      else if ([...spec.subcommands.keys()].some((sub) => !known.subcommands.has(sub)))
        commands.set(spec.name, {
          ...known,
          subcommands: new Map([...spec.subcommands, ...known.subcommands]),
        });
    }
    return new CommandTable(commands);
  }

  /** The table of a COMMAND reply alone (tests compare it with the shipped one). */
  static fromReply(reply: unknown): CommandTable {
    const commands = new Map<string, CommandSpec>();
    for (const raw of Array.isArray(reply) ? reply : []) {
      if (!Array.isArray(raw)) continue;
      const spec = commandSpec(raw);
      commands.set(spec.name, spec);
    }
    return new CommandTable(commands);
  }

  /** The shipped table alone. */
  static shipped(): CommandTable {
    return new CommandTable(shippedTable());
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
