// ETags: an operation run under an If-Match precondition, or answering its key's ETag (typed_etag in typed.lua).
import { ApiError } from '../errors';
import { type Command, changed, type Op } from './op';

/**
 * What a request asks of its key's ETag. `match` is the precondition as typed_etag takes it: '' none, '*' (the
 * key must exist) or '=' followed by the strong entity-tags it lists, each quoted. `answer` asks for the ETag
 * after the operation; computing it reads the whole key, so only requests that use ETags pay for it.
 */
export interface EtagRequest {
  readonly match: string;
  readonly answer: boolean;
  /**
   * With `answer`, only when cheap (typed.lua's etag_bounded), as the digest reads the whole key: 'pages' for a
   * whole-key read (not a list or sorted set of more than 128 elements), 'all' for an unconditional write (no
   * collection of more than 128 elements, no string over 16 KiB). Unset: always (the client asked for it).
   */
  readonly bounded?: 'pages' | 'all';
}

/** The entity-tags of a list (the contract checked its syntax), each with its `W/` when weak: left to right. */
const entityTags = (header: string) => header.match(/(?:W\/)?"[^"]*"/g) ?? [];

/** The precondition of an If-Match value (RFC 9110 §13.1.1): weak tags never match, strong comparison only. */
export function ifMatchCondition(header: string | undefined): string {
  if (header === undefined) return '';
  if (header.trim() === '*') return '*';
  return `=${entityTags(header)
    .filter((tag) => !tag.startsWith('W/'))
    .join(',')}`;
}

/** Whether an If-None-Match value matches `etag` (weak comparison, RFC 9110 §13.1.2): a 304 for a read. */
export function noneMatch(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  return entityTags(header).some((tag) => (tag.startsWith('W/') ? tag.slice(2) : tag) === etag);
}

const KIND: Record<string, 'r' | 'w' | 'i'> = { typedRead: 'r', typedWrite: 'w', typedIncr: 'i' };

/** typed_etag's answer codes. */
const ANSWER = { asked: '1', pages: '2', all: '3' } as const;

/** The ETag command's arguments before the wrapped command's own: kind, answer and precondition in one. */
export const ETAG_ARGS = 1;

/**
 * The command of `op` that typed_etag wraps: its only command; or, when every command is on one key (one script
 * call runs them in order, atomically), its only write (a sorted set's ZCARD before ZADD: the check still comes
 * right before the write), or the first of reads only (a list page and its length). -1 when there is none.
 */
function target(op: Op): number {
  const { commands } = op;
  if (commands.length === 1) return KIND[commands[0]?.name as string] ? 0 : -1;
  const key = commands[0]?.keys[0];
  if (commands.some((c) => c.keys.length !== 1 || c.keys[0] !== key || !KIND[c.name])) return -1;
  const writes = commands.flatMap((c, i) => (c.name === 'typedRead' ? [] : [i]));
  if (writes.length === 0) return 0;
  return writes.length === 1 ? (writes[0] as number) : -1;
}

/**
 * `op` under `request`: its typed command (see target) runs inside typed_etag, which checks the precondition
 * first (a failure is 412 precondition_failed, nothing written) and answers the ETag after it. The outcome is
 * `op`'s own, with `etag` (quoted) when the key exists. An operation asking nothing is left as it is; one that
 * cannot be wrapped answers no ETag and refuses a precondition (400 rather than a condition ignored).
 */
export function withEtag(op: Op, { match, answer, bounded }: EtagRequest): Op {
  if (match === '' && !answer) return op;
  const index = target(op);
  const command = op.commands[index];
  if (!command) {
    if (match !== '') throw new ApiError('invalid_request', 'This operation does not take If-Match');
    return op;
  }
  const commands = [...op.commands];
  const args = [`${KIND[command.name]}${answer ? ANSWER[bounded ?? 'asked'] : '0'}${match}`, ...command.args];
  commands[index] = { name: 'typedEtag', keys: command.keys, args };
  // Spread: an operation's other members (a list pop's whenEmpty) stay as they are.
  return changed(op, {
    commands,
    result: (replies) => {
      const [inner, etag] = replies[index] as [unknown, string | null];
      const outcome = op.result(replies.map((reply, i) => (i === index ? inner : reply)));
      return etag ? { ...outcome, etag: `"${etag}"` } : outcome;
    },
  });
}

/** The command an ETag command wraps, as replies' errors are read against it (its type, its arguments). */
export function unwrapped(command: Command): Command {
  return command.name === 'typedEtag' ? { ...command, args: command.args.slice(ETAG_ARGS) } : command;
}

/** If-Match (a batch item's `if_match`) lists no ETag of the key as it is: `current` is its ETag, '-' if missing. */
export function preconditionFailed(key: string, current: string): ApiError {
  if (current === '-') {
    return new ApiError('precondition_failed', `Key '${key}' does not exist, so no If-Match condition holds`);
  }
  const etag = `"${current}"`;
  return new ApiError(
    'precondition_failed',
    `Key '${key}' has changed: its ETag is ${etag}, not one If-Match lists`,
    {
      headers: { etag },
    },
  );
}

/**
 * `"atomic": "all"` found an item whose If-Match fails (`i`: 1-based in `group`, the commands of the script call):
 * the batch is refused whole. Other errors pass through.
 */
export function refusedWhole(err: Error, ops: readonly Op[], group: readonly Command[]): Error {
  const [code, i, current] = err.message.split(' ');
  if (code !== 'PRECONDITION_FAILED') return err;
  const command = group[Number(i) - 1] as Command;
  const index = ops.findIndex((op) => op.commands.includes(command));
  const e = preconditionFailed(command.keys[0] as string, current as string);
  const message = `operations[${index}]: ${e.message}; nothing was applied ("atomic": "all")`;
  return new ApiError(e.type, message, { details: { index }, headers: e.headers });
}
