// Every `pattern` of openapi.yaml is bounded (maxLength) and costs linear time on adversarial input (no ReDoS).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

interface PatternSchema {
  where: string;
  pattern: string;
  maxLength?: number;
}

/** Every schema of the document that has a `pattern`, wherever it is (components, parameters, inline). */
function patterns(node: unknown, where: string, found: PatternSchema[] = []): PatternSchema[] {
  if (Array.isArray(node)) {
    for (const [i, child] of node.entries()) patterns(child, `${where}[${i}]`, found);
  } else if (node && typeof node === 'object') {
    const record = node as Record<string, unknown>;
    if (typeof record.pattern === 'string' && record.type === 'string')
      found.push({ where, pattern: record.pattern, maxLength: record.maxLength as number | undefined });
    for (const [name, child] of Object.entries(record)) patterns(child, `${where}.${name}`, found);
  }
  return found;
}

const document = parse(readFileSync(join(__dirname, '..', 'openapi.yaml'), 'utf8'));
const all = patterns(document, '#');

/** What an attacker repeats: each character class a pattern might loop over, and the pairs that alternate. */
const UNITS = [
  ...'0123456789aZ_-.:+eE(*W/", \t!#~\u0080\u00ff',
  '1.',
  '.1',
  '1e',
  'e1',
  '"a",',
  '"a" , ',
  ' ,',
  'W/"a",',
  'ab',
  '-1',
];
/** What starts a plausible match, so that the engine gets deep before the bad character. */
const PREFIXES = ['', '(', '-', '+', '"', 'W/"', ' ', '*', '1', '.', '"a"'];
const BAD = ['\u0000', 'x', '@', '"', ',', '\n'];

/** The slowest of several runs of `regex` on `input`, in ms (a complexity guard, not a benchmark: see below). */
function fastest(regex: RegExp, input: string): number {
  let best = Number.POSITIVE_INFINITY;
  // The best of three: a single run can be slowed by a busy machine (garbage collection, another process).
  for (let run = 0; run < 3 && best > 5; run++) {
    const start = process.hrtime.bigint();
    regex.test(input);
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e6);
  }
  return best;
}

/** Every parameter (path, query, header) whose schema is a free string: what reaches our code's own regexes. */
function freeStrings(): [string, Record<string, unknown>][] {
  const parameters = document.components.parameters as Record<string, { schema?: Record<string, unknown> }>;
  return Object.entries(parameters)
    .map(([name, p]) => [name, p.schema ?? {}] as [string, Record<string, unknown>])
    .filter(
      ([, schema]) => schema.type === 'string' && schema.const === undefined && schema.enum === undefined,
    );
}

describe('the patterns of openapi.yaml', () => {
  // Parameters without a pattern still reach regexes (a key prefix escaped for SCAN MATCH, a cursor decoded and
  // checked): each must be bounded before any of them runs.
  test.each(freeStrings())('the string parameter %s has a maxLength', (_name, schema) => {
    expect(typeof schema.maxLength).toBe('number');
  });

  test('the contract has patterns to check (the walk finds them)', () => {
    expect(all.length).toBeGreaterThanOrEqual(5);
    expect(all.map((p) => p.where).join(' ')).toContain('ScoreBound');
  });

  test.each(all.map((p) => [p.where, p] as const))('%s has a maxLength', (_where, { maxLength }) => {
    expect(typeof maxLength).toBe('number');
  });

  // AJV compiles patterns with the `u` flag. A quadratic pattern (the old ScoreBound: `[0-9]+\.?[0-9]*`) took
  // ~2 s for 20,000 digits and a bad character; at 4 times the maxLength every linear pattern stays far below 50 ms.
  test.each(all.map((p) => [p.where, p] as const))(
    'when %s meets long runs of any character and a bad one, then it answers in linear time',
    (_where, { pattern, maxLength = 1024 }) => {
      const regex = new RegExp(pattern, 'u');
      let slowest = { ms: 0, input: '' };
      // Stops at the first slow input: a quadratic pattern would otherwise keep the test busy for minutes.
      const inputs = function* () {
        for (const length of [maxLength, maxLength * 4, 20_000])
          for (const prefix of PREFIXES)
            for (const unit of UNITS) {
              const run = prefix + unit.repeat(Math.ceil(length / unit.length));
              for (const bad of BAD) yield run + bad;
            }
      };
      for (const input of inputs()) {
        const ms = fastest(regex, input);
        if (ms > slowest.ms) slowest = { ms, input };
        if (ms >= 50) break;
      }
      expect({ ms: slowest.ms < 50 ? 'under 50' : slowest.ms, input: slowest.input.slice(0, 40) }).toEqual({
        ms: 'under 50',
        input: expect.any(String),
      });
    },
  );
});
