// Where a command's keys are, from the server's key specs (Redis's own getKeysUsingKeySpecs, db.c), and tenant prefixes.
import type { CommandSpec, KeySpec } from './table';

export interface KeyPositions {
  /** Indexes into the command's arguments (0 is the command name), in order, without repeats. */
  readonly positions: number[];
  /** False when a key spec cannot tell every key (SORT's STORE, MIGRATE): more keys may hide in the arguments. */
  readonly exact: boolean;
}

/** The first index of a spec's keys, or undefined when its keyword is absent (the spec then names no key). */
function first(spec: KeySpec, args: readonly string[]): number | undefined {
  const { begin } = spec;
  if (begin.type === 'index') return begin.index;
  if (begin.type !== 'keyword') return undefined;
  const argc = args.length;
  const start = begin.startfrom > 0 ? begin.startfrom : argc + begin.startfrom;
  const end = begin.startfrom > 0 ? argc - 1 : 1;
  const keyword = begin.keyword.toLowerCase();
  for (let i = start; i >= 1 && i < argc; i = start <= end ? i + 1 : i - 1) {
    if (args[i]?.toLowerCase() === keyword) return i + 1;
    if (i === end) break;
  }
  return undefined;
}

/** Pushes the keys of one spec onto `out`; none when the arguments do not fit it (Redis then refuses the command). */
function specKeys(spec: KeySpec, args: readonly string[], out: number[]): void {
  const start = first(spec, args);
  if (start === undefined) return;
  const argc = args.length;
  const { find } = spec;
  let from = start;
  let last: number;
  let step: number;
  if (find.type === 'range') {
    if (find.lastkey >= 0) last = from + find.lastkey;
    else if (find.limit === 0) last = argc + find.lastkey;
    else last = from + (Math.floor((argc - from) / find.limit) + find.lastkey);
    step = find.keystep;
  } else if (find.type === 'keynum') {
    const text = args[from + find.keynumidx];
    if (text === undefined || !/^\d{1,9}$/.test(text)) return;
    from += find.firstkey;
    last = from + Number(text) - 1;
    step = find.keystep;
  } else {
    return;
  }
  if (step < 1) return;
  for (let i = from; i <= last && i < argc; i += step) out.push(i);
}

export function keyPositions(command: CommandSpec, args: readonly string[]): KeyPositions {
  const positions: number[] = [];
  let exact = true;
  for (const spec of command.keySpecs) {
    if (!spec.exact) exact = false;
    specKeys(spec, args, positions);
  }
  // One spec gives its keys in order, once each; several may overlap (LMOVE with one list as both).
  if (command.keySpecs.length < 2) return { positions, exact };
  return { positions: [...new Set(positions)].sort((a, b) => a - b), exact };
}

/** Glob characters escaped, so that a prefix in a SCAN or KEYS pattern matches itself only. */
export const escapeGlob = (text: string) => text.replace(/[*?[\]\\]/g, '\\$&');
