// The benchmark's command line (bench/options.ts): what it accepts and refuses.
import { parseOptions } from '../bench/options';

test('when --pin is given, then the table and the memory runs are pinned; with --compare or --profile it is refused', () => {
  expect(parseOptions(['--pin']).pin).toBe(true);
  expect(parseOptions([]).pin).toBe(false);
  expect(() => parseOptions(['--pin', '--compare', 'main'])).toThrow(/--pin is for the table/);
  expect(() => parseOptions(['--pin', '--profile'])).toThrow(/--pin is for the table/);
});

test('when --connections is given, then --compare runs with it too', () => {
  const options = parseOptions(['--compare', 'main', '--connections=1']);
  expect(options.compare).toBe('main');
  expect(options.load.connections).toBe(1);
});
