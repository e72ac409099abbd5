// The V8 options and malloc settings of the service: those its own launchers start it with (npm start, the Docker
// image, cluster workers, the bench), and those it sets on itself at start, whichever way it was started.
import v8 from 'node:v8';

/**
 * Semi-spaces (the young generation's halves) of at most 8 MB instead of V8's 16 MB default: 16 MB less RSS, and
 * still large enough that a request's objects die young under load (with 2 MB, scavenges every 2.5 ms promoted
 * 9 KB of every GET to the old generation, which then grew to 4 x its live size, and cost 30-50 % more CPU;
 * docs/performance.md, "Memory"). Only the command line (or NODE_OPTIONS) sets it: V8 reads it when it sets
 * the heap up.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];

/**
 * After each full GC the old generation may grow to 2.5 x its live size before the next one (V8 picks up to 4 x on
 * a machine with much memory: a live heap of 30 MB then took 120 MB under load). 2 x cost 64 KiB reads 8 % more
 * CPU than no cap with 2 MB semi-spaces; 2.5 x costs nothing measurable (docs/performance.md, "Memory"). V8 reads
 * it at each GC, so the service sets it itself; heap-headroom.ts then lowers it for a larger live heap.
 */
export const SERVICE_RUNTIME_FLAGS: readonly string[] = ['--heap-growing-percent=150'];

/**
 * glibc's malloc gives each block of 128 KiB or more its own mapping, returned to the system when freed; but by
 * default, each time such a block is freed it raises that threshold to the block's size (up to 32 MB). Then
 * redis-parser's reply pools (3 x a 64 KiB value) and 1 MiB values come from the main heap, which only shrinks from
 * its top: the raw 64 KiB GET scenario left it 15-25 MB larger, for good (docs/performance.md, "Memory"). Setting
 * the threshold fixes it; at 64 KiB rather than glibc's 128, the Buffers of 64 KiB values (bodies, replies, answers)
 * get mappings of their own too: the bench's largest RSS 8-31 MB lower, no CPU cost measured (docs/performance.md,
 * "Fifth session"; 32 KiB cost 23-67 % more CPU on 64 KiB values). glibc reads it at start, so only a launcher can
 * set it; an operator's own value wins.
 */
export const SERVICE_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: '65536' };

/** `env` plus each of SERVICE_ENV that `env` does not set. */
export const withServiceEnv = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({ ...SERVICE_ENV, ...env });

const optionName = (flag: string) => flag.split('=')[0] as string;
const givenOptions = (execArgv: readonly string[], nodeOptions: string) =>
  [...execArgv, ...nodeOptions.split(/\s+/)].map(optionName);

/** Sets each of SERVICE_RUNTIME_FLAGS that neither the command line nor NODE_OPTIONS sets; returns those set. */
export function applyRuntimeFlags(
  set: (flag: string) => void = v8.setFlagsFromString,
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? '',
): string[] {
  const given = givenOptions(execArgv, nodeOptions);
  const flags = SERVICE_RUNTIME_FLAGS.filter((flag) => !given.includes(optionName(flag)));
  for (const flag of flags) set(flag);
  return flags;
}

/**
 * `execArgv` plus each of SERVICE_NODE_FLAGS whose option neither `execArgv` nor NODE_OPTIONS sets already (so an
 * operator's own value wins).
 */
export function withServiceFlags(
  execArgv: readonly string[],
  nodeOptions = process.env.NODE_OPTIONS ?? '',
): string[] {
  const given = givenOptions(execArgv, nodeOptions);
  return [...SERVICE_NODE_FLAGS.filter((flag) => !given.includes(optionName(flag))), ...execArgv];
}
