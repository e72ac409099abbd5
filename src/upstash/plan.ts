// One Upstash command made ready for Redis: judged, its keys and channels prefixed, its reply's key names unprefixed.
import { ApiError } from '../errors';
import type { Permission } from '../http/contract';
import { INTERNAL_PREFIX } from '../redis/keys';
import { escapeGlob, type KeyPositions, keyPositions } from './keys';
import { judge } from './policy';
import type { CommandSpec, CommandTable } from './table';

export interface Planned {
  /** The command as the table names it ('set', 'xinfo|groups'), for metrics and events. */
  readonly name: string;
  readonly spec: CommandSpec;
  /** The arguments as Redis receives them (args[0] is the command). */
  readonly args: string[];
  /** The Redis keys (prefixed). */
  readonly keys: string[];
  readonly permission: Permission;
  readonly writes: boolean;
  readonly blocking: boolean;
  /** False when Redis's key specs cannot tell every key: COMMAND GETKEYS must vouch for them. */
  readonly exact: boolean;
  /** Key names in the reply turned back into the caller's names; internal keys dropped. */
  readonly reply: (value: unknown) => unknown;
  /** SCAN ... WITHTYPE (Upstash's extension): each key followed by its type in the reply. */
  readonly withTypes: boolean;
  /** The keys a write changed, from its raw reply, when not all of `keys` (events.ts deletesEach). */
  readonly eventKeys?: (value: unknown) => string[];
}

/** Command names whose replies ioredis reshapes when spelled so (Command.setReplyTransformer). */
const RESHAPED = new Set(['hgetall']);

const isInternal = (redisKey: string) => redisKey.startsWith(INTERNAL_PREFIX);

export function unknownCommand(args: readonly string[]): ApiError {
  const [name = '', sub] = args;
  return new ApiError(
    'invalid_request',
    sub === undefined
      ? `ERR unknown command '${name}'`
      : `ERR unknown command or subcommand '${name} ${sub}'`,
  );
}

/** `prefix`: SVC_KEY_PREFIX followed by the credential's prefix ('' for none); `tenant`: the credential has one. */
export function plan(
  table: CommandTable,
  raw: readonly string[],
  prefix: string,
  tenant = false,
  scriptPermission: Permission = 'admin',
): Planned {
  if (raw.length === 0) throw new ApiError('invalid_request', 'ERR empty command');
  const spec = table.find(raw);
  if (!spec) throw unknownCommand(raw);
  const { permission, writes, blocking } = judge(spec, raw, prefix !== '', tenant, scriptPermission);
  const { positions, exact } =
    sortStore(spec.name, raw) ??
    geoStore(spec.name, raw) ??
    streamKeys(spec.name, raw) ??
    keyPositions(spec, raw);
  if (!exact && prefix !== '')
    throw new ApiError(
      'forbidden',
      `ERR the keys of '${spec.name.toUpperCase().replace('|', ' ')}' cannot be located from the command table, so it cannot be confined to a prefix`,
    );
  const args = raw.slice();
  // ioredis reshapes the replies of some names spelled in lower case (hgetall into an object): those go in upper
  // case. Others keep the caller's spelling, usually lower case, which ioredis's flag lookups take without a copy.
  if (RESHAPED.has(args[0] as string)) args[0] = (raw[0] as string).toUpperCase();
  const keys = positions.map((i) => {
    const key = prefix + (args[i] as string);
    if (isInternal(key)) throw new ApiError('forbidden', `ERR key '${args[i]}' is reserved for the service`);
    args[i] = key;
    return key;
  });
  const withTypes = spec.name === 'scan' && dropWithType(args);
  const reply = special(spec.name, args, prefix);
  return { name: spec.name, spec, args, keys, permission, writes, blocking, exact, reply, withTypes };
}

/**
 * SORT's STORE destination, which Redis's key specs leave 'unknown' (the keyword may come anywhere): found by
 * walking the options as Redis parses them (BY and GET patterns are refused in policy.ts).
 */
function sortStore(name: string, args: readonly string[]): KeyPositions | undefined {
  if (name !== 'sort' && name !== 'sort_ro') return undefined;
  const positions = [1];
  const skip: Record<string, number> = { by: 1, get: 1, limit: 2 };
  for (let i = 2; i < args.length; i++) {
    const word = (args[i] as string).toLowerCase();
    if (word === 'store' && i + 1 < args.length) positions.push(++i);
    else i += skip[word] ?? 0;
  }
  return { positions, exact: true };
}

/**
 * GEORADIUS's and GEORADIUSBYMEMBER's STORE / STOREDIST destination. Their key specs find the first STORE, but Redis
 * stores to the last one given (`STORE a STORE b` writes b): Redis 8 marks those specs incomplete. Found as Redis's
 * own georadiusGetKeys finds it: from argument 5 on, each STORE or STOREDIST followed by an argument names the
 * destination, and the last one wins.
 */
function geoStore(name: string, args: readonly string[]): KeyPositions | undefined {
  if (name !== 'georadius' && name !== 'georadiusbymember') return undefined;
  let stored = -1;
  for (let i = 5; i < args.length - 1; i++) {
    const word = (args[i] as string).toLowerCase();
    if (word === 'store' || word === 'storedist') stored = ++i;
  }
  return { positions: stored === -1 ? [1] : [1, stored], exact: true };
}

/** The options before STREAMS in XREAD and XREADGROUP, with the number of arguments each takes. */
const STREAM_OPTIONS = new Map([
  ['block', 1],
  ['count', 1],
  ['group', 2],
  ['noack', 0],
]);

/**
 * XREAD's and XREADGROUP's stream keys, whose key spec Redis 8 marks incomplete (a group or a key may be named
 * STREAMS): found by walking the options as Redis's own xreadGetKeys does. An option it does not know (a newer
 * server's) leaves the keys unknown, which a prefix refuses.
 */
function streamKeys(name: string, args: readonly string[]): KeyPositions | undefined {
  if (name !== 'xread' && name !== 'xreadgroup') return undefined;
  for (let i = 1; i < args.length; i++) {
    const word = (args[i] as string).toLowerCase();
    const count = (args.length - i - 1) / 2;
    if (word === 'streams' && Number.isInteger(count) && count > 0)
      return { positions: Array.from({ length: count }, (_, k) => i + 1 + k), exact: true };
    const skip = STREAM_OPTIONS.get(word);
    if (skip === undefined) break;
    i += skip;
  }
  return { positions: [], exact: false };
}

const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const same = (value: unknown) => value;
const visible = (name: unknown) => !(typeof name === 'string' && isInternal(name));
const strip = (prefix: string, name: unknown) =>
  typeof name === 'string' && name.startsWith(prefix) ? name.slice(prefix.length) : name;
const keysOut = (prefix: string, list: unknown) =>
  asList(list)
    .filter(visible)
    .map((name) => strip(prefix, name));
const firstOut = (prefix: string, value: unknown) =>
  Array.isArray(value) ? [strip(prefix, value[0]), ...value.slice(1)] : value;

/**
 * Commands whose arguments hold a pattern or channel, or whose reply holds key names: their arguments are rewritten
 * here (in place) and the reply transform returned (`same` for every other command).
 */
function special(name: string, args: string[], prefix: string): (value: unknown) => unknown {
  switch (name) {
    case 'scan':
      confineScan(args, prefix);
      return (value) => (Array.isArray(value) ? [value[0], keysOut(prefix, value[1])] : value);
    case 'keys':
      args[1] = escapeGlob(prefix) + (args[1] ?? '*');
      return (list) => keysOut(prefix, list);
    case 'randomkey':
      return (value) => (visible(value) ? value : null);
    case 'blpop':
    case 'brpop':
    case 'bzpopmin':
    case 'bzpopmax':
    case 'lmpop':
    case 'blmpop':
    case 'zmpop':
    case 'bzmpop':
      return (value) => firstOut(prefix, value);
    case 'xread':
    case 'xreadgroup':
      return (value) => (Array.isArray(value) ? value.map((v) => firstOut(prefix, v)) : value);
    case 'publish':
    case 'spublish':
      args[1] = prefix + (args[1] ?? '');
      return same;
    case 'pubsub|channels':
    case 'pubsub|shardchannels':
      args[2] = escapeGlob(prefix) + (args[2] ?? '*');
      return (value) => asList(value).map((name) => strip(prefix, name));
    case 'pubsub|numsub':
      for (let i = 2; i < args.length; i++) args[i] = prefix + args[i];
      return (value) => asList(value).map((v, i) => (i % 2 === 0 ? strip(prefix, v) : v));
    default:
      return same;
  }
}

/** Removes Upstash's WITHTYPE flag from SCAN's options (Redis does not know it); true when it was there. */
function dropWithType(args: string[]): boolean {
  const at = args.findIndex((a, i) => i >= 2 && a.toLowerCase() === 'withtype');
  if (at < 0) return false;
  args.splice(at, 1);
  return true;
}

/** SCAN cursor [MATCH pattern] [COUNT n] [TYPE t]: the pattern confined to the prefix (one is added if absent). */
function confineScan(args: string[], prefix: string): void {
  if (prefix === '') return;
  let matched = false;
  // Options come in pairs; every MATCH is confined (Redis uses the last one given).
  for (let i = 2; i < args.length - 1; i += 2) {
    if (args[i]?.toLowerCase() === 'match') {
      args[i + 1] = escapeGlob(prefix) + args[i + 1];
      matched = true;
    }
  }
  if (!matched) args.push('MATCH', `${escapeGlob(prefix)}*`);
}
