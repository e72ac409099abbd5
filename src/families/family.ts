// What declares a data family: its Redis type, size command, operations, their public batch names and its routes.

import { wantsBytes } from '../http/bytes-body';
import type { Method, RequestInput } from '../http/contract';
import { decodeInput, type Encoding, encodingOf, textAsBytes, toBytes, withEncoding } from '../ops/encoding';
import { type EtagRequest, ifMatchCondition, withEtag } from '../ops/etag';
import { changed, type Limits, type Op } from '../ops/op';

/** A family's operations by name, each building an `Op` from its input (see ops/). */
// biome-ignore lint/suspicious/noExplicitAny: each operation takes an input of its own; checked where declared
export type OpTable = Record<string, (input: any) => Op>;

/** A route of a family: METHOD /store/<family><path> runs `op` on what `input` takes from the request. */
export type FamilyRoute<Ops extends OpTable> = {
  [Name in keyof Ops & string]: {
    readonly method: Method;
    /** Relative to `/store/<family>`: '/{key}', '/{key}/ttl', '/union'. */
    readonly path: string;
    readonly op: Name;
    readonly input: (input: RequestInput) => Parameters<Ops[Name]>[0];
    /** `If-Match: *` is the route's own condition (the field or member must exist), not one on the key's ETag. */
    readonly ownIfMatchStar?: true;
    /** The input holds byte strings (a raw application/octet-stream body, see ops/encoding.ts). */
    readonly bytesIn?: true;
    /** With Accept: application/octet-stream, the answer is this field's bytes instead of JSON. */
    readonly bytesOut?: string;
  };
}[keyof Ops & string];

/** How a family is written down: typed, so that a batch name or route naming no operation does not compile. */
export interface FamilyDeclaration<Ops extends OpTable, Name, Type, Size> {
  /** The path segment: /store/<name>/... */
  readonly name: Name;
  /** What Redis's TYPE answers for a key of this family. */
  readonly redisType: Type;
  /**
   * The command that answers a key's size (a write answers the new total with it; key info shows it): its
   * elements, a string's length in bytes; null when none.
   */
  readonly sizeCommand: Size;
  /** A command and arguments (after the key) that create a sample key of this family, for tests. */
  readonly sample: readonly [string, ...string[]];
  readonly ops: (limits: Limits) => Ops;
  /**
   * Public batch item type -> operation. This map is the public API: renaming an operation does not change it.
   * It offers every single-key operation of the family (tests/families.test.ts checks it against the routes).
   */
  readonly batch: Readonly<Record<string, keyof Ops & string>>;
  /** In registration order: reserved segments (`/union`) before `/{key}`. The batch route comes first. */
  readonly routes: readonly FamilyRoute<Ops>[];
}

/** A route bound to its operations: what http/routes.ts registers. */
export interface BoundRoute {
  readonly method: Method;
  /** The whole template: /store/<family>/{key}/ttl. */
  readonly path: string;
  /** The operation's name in the family's table (tests check batches against it). */
  readonly op: string;
  build(input: RequestInput): Op;
}

/** A batch item after validation: its public `type` and the fields of that operation's input. */
export interface BatchItem {
  type: string;
  [field: string]: unknown;
}

/** A family with its types erased, so that the list of families can be walked without knowing each one. */
export interface Family<Name extends string = string, Type extends string = string, Size = string | null> {
  readonly name: Name;
  readonly redisType: Type;
  readonly sizeCommand: Size;
  readonly sample: readonly [string, ...string[]];
  /** `/store/<name>/batch` */
  readonly batchPath: string;
  /** Public batch item type -> operation name, in declaration order. */
  readonly batch: Readonly<Record<string, string>>;
  /** The routes and batch items, with operations built for these limits. */
  bind(limits: Limits): {
    routes: BoundRoute[];
    batch: ReadonlyMap<string, (item: BatchItem) => Op>;
    /** Public batch item type -> whether it writes (its route is not a GET): a batch's permission before validation. */
    writes: ReadonlyMap<string, boolean>;
  };
}

export function defineFamily<
  Ops extends OpTable,
  const Name extends string,
  const Type extends string,
  const Size extends string | null,
>(declaration: FamilyDeclaration<Ops, Name, Type, Size>): Family<Name, Type, Size> {
  const { name, redisType, sizeCommand, sample, batch } = declaration;
  return {
    name,
    redisType,
    sizeCommand,
    sample,
    batchPath: `/store/${name}/batch`,
    batch,
    bind(limits) {
      const ops = declaration.ops(limits);
      // Values given in base64 are byte strings, whose size is checked once decoded (ops/encoding.ts).
      const bytesOps = declaration.ops({ ...limits, maxValueBytes: Number.MAX_SAFE_INTEGER });
      const run = (op: string, encoding: Encoding = 'text') => {
        if (encoding === 'text') return ops[op] as (input: unknown) => Op;
        const build = bytesOps[op] as (input: unknown) => Op;
        if (encoding === 'bytes') return build;
        return (input: unknown) => build(decodeInput(input as Record<string, unknown>, limits.maxValueBytes));
      };
      /** A text read's read again as bytes: the same operation on the input's UTF-8 byte strings (ops/encoding.ts). */
      const readAsBytes = (op: string, input: unknown, tag: (built: Op) => Op, encoding: Encoding) =>
        encoding === 'text'
          ? () => tag((bytesOps[op] as (input: unknown) => Op)(textAsBytes(input as Record<string, unknown>)))
          : undefined;
      // The whole-key read (GET /{key}) always answers the key's ETag, also as a batch item; see ops/etag.ts.
      const wholeRead = declaration.routes.find((r) => r.method === 'get' && r.path === '/{key}')?.op;
      const routes = declaration.routes.map((r) => ({
        method: r.method,
        path: `/store/${name}${r.path}`,
        op: r.op,
        build: (input: RequestInput) => {
          const asBytes = r.bytesOut !== undefined && wantsBytes(input.headers.accept);
          const encoding =
            r.bytesIn || asBytes ? 'bytes' : encodingOf(input.body?.encoding ?? input.query.encoding);
          const opInput = r.input(input);
          const op = run(r.op, encoding)(opInput);
          const tag = (built: Op) =>
            withEtag(built, routeEtag(input.headers, built.writes, r.op === wholeRead, r.ownIfMatchStar));
          if (asBytes) return answerBytes(tag(op), r.bytesOut as string);
          return withEncoding(tag(op), encoding, readAsBytes(r.op, opInput, tag, encoding));
        },
      }));
      // An item's `type` is the public name; the operation ignores it like any field it does not read.
      const items = new Map(
        Object.entries(batch).map(([type, name]) => {
          const item = (input: BatchItem) => {
            const ifMatch = input.if_match as string | undefined;
            const answer = ifMatch !== undefined || name === wholeRead;
            const bounded = ifMatch === undefined ? 'pages' : undefined;
            const encoding = encodingOf(input.encoding);
            const tag = (built: Op) =>
              answer ? withEtag(built, { match: ifMatchCondition(ifMatch), answer, bounded }) : built;
            return withEncoding(
              tag(run(name, encoding)(input)),
              encoding,
              readAsBytes(name, input, tag, encoding),
            );
          };
          return [type, item];
        }),
      );
      const writes = new Map(
        Object.entries(batch).map(([type, name]) => [
          type,
          declaration.routes.find((r) => r.op === name)?.method !== 'get',
        ]),
      );
      return { routes, batch: items, writes };
    },
  };
}

/**
 * `op` (built for byte strings) answering its body's `field` as raw bytes (see http/send.ts sendBytes). Its replies
 * are not made byte strings first (withEncoding's 'bytes'): the value's Buffer, as Redis sent it, is what is
 * answered (a string's GET passes its reply's value through, and answers its ETag's hex digits whether a string or
 * a Buffer), instead of a latin1 string of it and a copy of that string's bytes again (two copies of a 64 KiB value).
 */
function answerBytes(op: Op, field: string): Op {
  return changed(op, {
    commands: op.commands.map((c) => ({ ...c, buffers: true, bytes: true })),
    result: (replies) => {
      const outcome = op.result(replies);
      const value = outcome.body[field];
      return { ...outcome, bytes: Buffer.isBuffer(value) ? value : toBytes(String(value)) };
    },
  });
}

/**
 * What a route's request asks of the key's ETag: a whole-key read answers it; a write with If-Match is checked
 * against it; a write answers the new one (unasked, only when the key is small: see EtagRequest.bounded). Field
 * and other partial reads pay nothing.
 */
function routeEtag(
  headers: RequestInput['headers'],
  writes: boolean,
  wholeRead: boolean,
  ownIfMatchStar: true | undefined,
): EtagRequest {
  if (!writes)
    return { match: '', answer: wholeRead, bounded: headers['if-none-match'] ? undefined : 'pages' };
  const ifMatch = headers['if-match'];
  // An unconditional write answers the new ETag too, when the key is small enough for that to be cheap.
  if (ifMatch === undefined && headers['if-none-match'] === undefined)
    return { match: '', answer: true, bounded: 'all' };
  return { match: ownIfMatchStar && ifMatch === '*' ? '' : ifMatchCondition(ifMatch), answer: true };
}
