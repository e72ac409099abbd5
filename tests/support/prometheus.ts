// Scrapes /store/admin/metrics and reads samples out of the parsed Prometheus text.
import type { Express } from 'express';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import request from 'supertest';

export type Families = ReturnType<typeof parsePrometheusTextFormat>;
type Labels = Record<string, string>;

export async function scrape(app: Express): Promise<Families> {
  const res = await request(app).get('/store/admin/metrics');
  if (res.status !== 200) throw new Error(`metrics answered ${res.status}`);
  return parsePrometheusTextFormat(res.text);
}

const matches = (have: Labels | undefined, want: Labels) =>
  Object.entries(want).every(([k, v]) => have?.[k] === v);

/** The value of a counter or gauge sample (0 when absent). */
export function value(families: Families, name: string, labels: Labels = {}): number {
  const sample = families.find((f) => f.name === name)?.metrics.find((m) => matches(m.labels, labels));
  return sample && 'value' in sample ? Number(sample.value) : 0;
}

/** The count of a histogram sample (0 when absent). */
export function count(families: Families, name: string, labels: Labels = {}): number {
  const sample = families.find((f) => f.name === name)?.metrics.find((m) => matches(m.labels, labels));
  return sample && 'count' in sample ? Number(sample.count) : 0;
}
