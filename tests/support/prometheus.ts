// Scrapes /store/admin/metrics and reads samples out of the parsed Prometheus text.
import type { Express } from 'express';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import request from 'supertest';

type Families = ReturnType<typeof parsePrometheusTextFormat>;
type Labels = Record<string, string>;

export interface Scrape {
  /** The families as parsed, with their types. */
  families: Families;
  /**
   * The same text parsed with histograms read as untyped, so that each `_bucket`, `_sum` and `_count`
   * series keeps its labels (the parser merges the series of a labelled histogram into one).
   */
  series: Families;
}

export async function scrape(app: Express): Promise<Scrape> {
  const res = await request(app).get('/store/admin/metrics');
  if (res.status !== 200) throw new Error(`metrics answered ${res.status}`);
  return parseScrape(res.text);
}

export function parseScrape(text: string): Scrape {
  return {
    families: parsePrometheusTextFormat(text),
    series: parsePrometheusTextFormat(text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped')),
  };
}

const matches = (have: Labels | undefined, want: Labels) =>
  Object.entries(want).every(([k, v]) => have?.[k] === v);

/** The value of a counter or gauge sample, or of a histogram's `_count` / `_sum` series (0 when absent). */
export function value(scraped: Scrape, name: string, labels: Labels = {}): number {
  // Read as untyped, each label set of a histogram starts a new family of the same name: look in all.
  const sample = scraped.series
    .filter((f) => f.name === name)
    .flatMap((f) => f.metrics)
    .find((m) => matches(m.labels, labels));
  return sample && 'value' in sample ? Number(sample.value) : 0;
}

/** The number of observations of a histogram. */
export const count = (scraped: Scrape, name: string, labels: Labels = {}) =>
  value(scraped, `${name}_count`, labels);

export const typeOf = (scraped: Scrape, name: string) => scraped.families.find((f) => f.name === name)?.type;
