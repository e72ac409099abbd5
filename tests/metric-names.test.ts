// The metrics text follows Prometheus's naming rules, checked here offline; `promtool check metrics` too when on PATH.
import { spawnSync } from 'node:child_process';
import request from 'supertest';
import { type TestApp, testApp } from './support/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp('metric-names');
});
afterAll(() => t.close());

/** The rules `promtool check metrics` applies to names, types and help texts, as problems found in `text`. */
function namingProblems(text: string): string[] {
  const types = new Map(
    [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1] as string, m[2] as string]),
  );
  const helped = new Set([...text.matchAll(/^# HELP (\S+) \S/gm)].map((m) => m[1]));
  const problems: string[] = [];
  for (const [name, type] of types) {
    if (!/^[a-z_:][a-z0-9_:]*$/.test(name)) problems.push(`${name}: not snake_case`);
    if (type === 'counter' && !name.endsWith('_total'))
      problems.push(`${name}: a counter must end in _total`);
    if (type !== 'counter' && name.endsWith('_total')) problems.push(`${name}: only counters end in _total`);
    if (!helped.has(name)) problems.push(`${name}: no help text`);
    if (
      /_(milliseconds|microseconds|nanoseconds|minutes|hours|days|kilobytes|megabytes|gigabytes)(_|$)/.test(
        name,
      )
    )
      problems.push(`${name}: not a base unit (seconds, bytes)`);
    if (!['histogram', 'summary'].includes(type) && /_(bucket|count|sum)$/.test(name))
      problems.push(`${name}: a reserved suffix on a ${type}`);
  }
  return problems;
}

async function metricsText(): Promise<string> {
  await request(t.data).get('/store/string/metric-names-k');
  await request(t.data).get('/store/nothing/here');
  const res = await request(t.data).get('/store/admin/metrics');
  expect(res.status).toBe(200);
  return res.text;
}

test('when metrics are scraped, then every family follows the naming rules (counters end in _total, nothing else does)', async () => {
  const text = await metricsText();
  expect(text).toContain('# TYPE svc_requests_total counter');
  expect(text).toContain('# TYPE nodejs_active_handles gauge');
  expect(namingProblems(text)).toEqual([]);
});

test('the offline check finds what promtool finds', () => {
  const text = [
    '# HELP good_total ok',
    '# TYPE good_total counter',
    '# HELP nodejs_active_handles_total Total number of active handles.',
    '# TYPE nodejs_active_handles_total gauge',
    '# HELP requests Requests',
    '# TYPE requests counter',
    '# TYPE latency_milliseconds histogram',
  ].join('\n');
  expect(namingProblems(text)).toEqual([
    'nodejs_active_handles_total: only counters end in _total',
    'requests: a counter must end in _total',
    'latency_milliseconds: no help text',
    'latency_milliseconds: not a base unit (seconds, bytes)',
  ]);
});

test('when promtool is installed, then `promtool check metrics` accepts the metrics text', async () => {
  const text = await metricsText();
  const run = spawnSync(process.env.PROMTOOL ?? 'promtool', ['check', 'metrics'], {
    input: text,
    encoding: 'utf8',
  });
  if ((run.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return; // not installed: the rules above stand in
  expect(`${run.status} ${run.stdout}${run.stderr}`).toBe('0 ');
});
