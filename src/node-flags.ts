// The V8 options the service's own launchers start it with: npm start, the Docker image, cluster workers, the bench.

/**
 * Semi-spaces (the young generation's halves) of at most 8 MB instead of V8's 16 MB default: 16 MB less RSS, and
 * still large enough that a request's objects die young under load (with 2 MB, scavenges every 2.5 ms promoted
 * 9 KB of every GET to the old generation, which then grew to 4 x its live size, and cost 30-50 % more CPU;
 * docs/performance.md, "Memory"). Only the command line (or NODE_OPTIONS) sets it: V8 reads it when it sets
 * the heap up.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];

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
