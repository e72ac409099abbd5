// The V8 options the service's own launchers start it with: npm start, the Docker image, cluster workers, the bench.

/**
 * Semi-spaces (the young generation's halves) of at most 2 MB instead of V8's 16 MB default: the young
 * generation then stays small after start-up (AJV's compile garbage grows it to its maximum) and under load,
 * about 115 MB RSS after load instead of 143-177 MB, at no measurable CPU cost (docs/performance.md, "Memory").
 * Only the command line (or NODE_OPTIONS) sets it: V8 reads it when it sets the heap up.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2'];

const optionName = (flag: string) => flag.split('=')[0] as string;

/**
 * `execArgv` plus each of SERVICE_NODE_FLAGS whose option neither `execArgv` nor NODE_OPTIONS sets already (so an
 * operator's own value wins).
 */
export function withServiceFlags(
  execArgv: readonly string[],
  nodeOptions = process.env.NODE_OPTIONS ?? '',
): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].map(optionName);
  return [...SERVICE_NODE_FLAGS.filter((flag) => !given.includes(optionName(flag))), ...execArgv];
}
