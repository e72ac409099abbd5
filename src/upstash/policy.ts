// Which commands the Upstash endpoint runs, with which permission, and which it always refuses (and why).
import { ApiError } from '../errors';
import type { Permission } from '../http/contract';
import type { CommandSpec } from './table';

/** Refused whatever the credential, with what to do instead. */
const REFUSED: Record<string, string> = {
  multi: 'transactions are POST /upstash/multi-exec',
  exec: 'transactions are POST /upstash/multi-exec',
  discard: 'transactions are POST /upstash/multi-exec',
  watch: 'WATCH needs a connection of its own across requests; transactions are POST /upstash/multi-exec',
  unwatch: 'transactions are POST /upstash/multi-exec',
  subscribe: 'subscriptions are /upstash/subscribe/<channels>',
  psubscribe: 'pattern subscriptions are /upstash/psubscribe/<patterns>',
  ssubscribe: 'subscriptions are /upstash/subscribe/<channels>',
  unsubscribe: 'a subscription ends when its request does',
  punsubscribe: 'a subscription ends when its request does',
  sunsubscribe: 'a subscription ends when its request does',
  select: 'the service serves one database',
  swapdb: 'the service serves one database',
  move: 'the service serves one database',
  migrate: 'it reaches another server',
  wait: 'durability is the service setting SVC_REDIS_WAIT_REPLICAS',
  waitaof: 'durability is the service setting SVC_REDIS_WAIT_REPLICAS',
  hello: 'the protocol is fixed by the service',
  auth: 'credentials are the Authorization header',
  reset: 'connections are shared',
  quit: 'connections are shared',
  client: 'connections are shared',
  readonly: 'connections are shared',
  readwrite: 'connections are shared',
  asking: 'connections are shared',
  cluster: 'server-wide',
  info: 'server-wide (the admin API has /store/admin/info)',
  role: 'server-wide',
  lastsave: 'server-wide',
  slowlog: 'server-wide',
  latency: 'server-wide',
  lolwut: 'server-wide',
  pfdebug: 'server-wide',
  pfselftest: 'server-wide',
  object: 'OBJECT ENCODING, FREQ, IDLETIME and REFCOUNT are allowed',
  memory: 'MEMORY USAGE is allowed',
  command: 'server-wide',
};

/** Subcommands of refused containers that are harmless and per key. */
const ALLOWED_SUBCOMMANDS = new Set([
  'object|encoding',
  'object|freq',
  'object|idletime',
  'object|refcount',
  'memory|usage',
  'command|count',
]);

/** Need `admin`: flushes and script / function management. */
const ADMIN = new Set([
  'flushdb',
  'flushall',
  'script|load',
  'script|flush',
  'script|kill',
  'function|load',
  'function|delete',
  'function|flush',
  'function|kill',
  'function|restore',
  'function|dump',
]);

/**
 * Scripts and functions: they may touch keys they do not declare, so a credential with a prefix may not run them
 * (a tenant could reach other tenants' keys), and only `admin` may (an undeclared key could be an internal one)
 * unless SVC_UPSTASH_SCRIPT_PERMISSION=write says otherwise.
 */
export const SCRIPTS = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro']);

/** Not writes for Redis, but they act on other clients: `write`. */
const PUBLISHES = new Set(['publish', 'spublish']);

/** Allowed only without a prefix: they count or pick among every key of the database. */
const UNPREFIXED_ONLY = new Set([
  'dbsize',
  'randomkey',
  'pubsub|numpat',
  'pubsub|shardchannels',
  'pubsub|shardnumsub',
]);

export interface Verdict {
  readonly permission: Permission;
  readonly writes: boolean;
  readonly blocking: boolean;
  readonly script: boolean;
}

const refuse = (name: string, why: string) =>
  new ApiError(
    'forbidden',
    `ERR command '${name.toUpperCase().replace('|', ' ')}' is not allowed here: ${why}`,
  );

/** What judge knows of a command whatever its arguments and caller: worked out once per command. */
interface Rule {
  /** The command, without its subcommand. */
  readonly top: string;
  /** Why it is refused whatever the credential, if it is. */
  readonly refused?: string;
  readonly unprefixedOnly: boolean;
  /** Its verdict; a script's permission is SVC_UPSTASH_SCRIPT_PERMISSION instead. */
  readonly verdict: Verdict;
}

const rules = new WeakMap<CommandSpec, Rule>();

function ruleOf(spec: CommandSpec): Rule {
  const known = rules.get(spec);
  if (known) return known;
  const { name } = spec;
  const top = name.split('|', 1)[0] as string;
  const why = REFUSED[top];
  const refused =
    why !== undefined && !ALLOWED_SUBCOMMANDS.has(name)
      ? why
      : spec.flags.has('admin') || spec.categories.has('@admin')
        ? 'server administration is not served'
        : undefined;
  const script = SCRIPTS.has(top);
  const writes = spec.flags.has('write');
  const admin = ADMIN.has(name);
  const rule: Rule = {
    top,
    refused,
    unprefixedOnly: UNPREFIXED_ONLY.has(name),
    verdict: {
      permission: admin ? 'admin' : writes || PUBLISHES.has(name) ? 'write' : 'read',
      writes: writes || (script && !top.endsWith('_ro')) || admin,
      blocking: spec.flags.has('blocking'),
      script,
    },
  };
  rules.set(spec, rule);
  return rule;
}

/**
 * What `spec` needs, or throws 403 for a command the endpoint never runs (or not for this caller). `prefixed`: keys go
 * under a prefix (SVC_KEY_PREFIX or the credential's); `tenant`: the credential itself has one.
 */
export function judge(
  spec: CommandSpec,
  args: readonly string[],
  prefixed: boolean,
  tenant: boolean,
  scriptPermission: Permission = 'admin',
): Verdict {
  const { name } = spec;
  const { top, refused, unprefixedOnly, verdict } = ruleOf(spec);
  if (refused !== undefined) throw refuse(name, refused);
  if (prefixed && unprefixedOnly) throw refuse(name, 'it spans every tenant');
  if (top === 'copy' && args.some((a) => a.toLowerCase() === 'db'))
    throw refuse(name, 'the service serves one database');
  if ((top === 'sort' || top === 'sort_ro') && sortReachesOtherKeys(args))
    throw refuse(name, 'BY and GET patterns read keys the command does not declare');
  if (!verdict.script) return verdict;
  if (tenant) throw refuse(name, 'scripts and functions can reach keys outside a prefix');
  return { ...verdict, permission: scriptPermission };
}

/** SORT ... BY pattern / GET pattern (other than `BY nosort` and `GET #`) reads keys named by the data. */
function sortReachesOtherKeys(args: readonly string[]): boolean {
  for (let i = 2; i < args.length - 1; i++) {
    const word = args[i]?.toLowerCase();
    const next = args[i + 1];
    if (word === 'by' && next?.toLowerCase() !== 'nosort') return true;
    if (word === 'get' && next !== '#') return true;
  }
  return false;
}
