// `npm run bench -- --profile`: CPU profiles of the service (node --cpu-prof) under the GET, POST and batch loads
// (or --only's scenarios).
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { formatSummary, summarise } from './cpuprofile';
import type { LoadOptions, Measurement } from './load';
import { SERVICE_SCENARIOS } from './scenarios';
import { driveTarget, type ServiceOptions, startService } from './targets';

/**
 * One service process per scenario, started with --cpu-prof; it writes its profile when it exits (SIGTERM).
 * Only the samples of the measured run count (the profile clock and process.hrtime are both monotonic µs),
 * so start-up (compiling the contract) and the warm-up stay out of the figures.
 */
export async function profileRun(
  service: ServiceOptions,
  load: LoadOptions,
  outDir: string,
  log: (line: string) => void,
  ids: readonly string[],
): Promise<void> {
  for (const scenario of SERVICE_SCENARIOS.filter((s) => ids.includes(s.id))) {
    const profDir = path.join(outDir, scenario.id);
    rmSync(profDir, { recursive: true, force: true });
    mkdirSync(profDir, { recursive: true });
    const t = await startService({
      ...service,
      // Its own log: readiness is read from the log's 'listening' line, which an earlier run's log already has.
      logFile: path.join(profDir, 'service.log'),
      nodeArgs: [...(service.nodeArgs ?? []), '--cpu-prof', `--cpu-prof-dir=${profDir}`],
    });
    log(`profiling ${scenario.title}`);
    let m: Measurement;
    try {
      m = await driveTarget(t, scenario.request, load);
    } finally {
      await t.server.stop();
    }
    const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no .cpuprofile in ${profDir}`);
    const summary = summarise(JSON.parse(readFileSync(path.join(profDir, file), 'utf8')), m.windowUs);
    process.stdout.write(`\n== ${scenario.title}: ${Math.round(m.reqPerSec)} req/s under the profiler; `);
    process.stdout.write(`${path.join(profDir, file)}\n${formatSummary(summary)}`);
  }
}
