// The service's V8 options (src/node-flags.ts): added by its launchers unless the operator set the same option.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  applyRuntimeFlags,
  SERVICE_ENV,
  SERVICE_NODE_FLAGS,
  SERVICE_RUNTIME_FLAGS,
  withServiceEnv,
  withServiceFlags,
} from '../src/node-flags';

const ROOT = path.join(__dirname, '..');

describe('withServiceFlags', () => {
  test('when nothing sets them, then the service flags come first and the given options stay', () => {
    expect(withServiceFlags(['-r', 'x.js'], '')).toEqual([...SERVICE_NODE_FLAGS, '-r', 'x.js']);
  });

  test('when the command line or NODE_OPTIONS sets the same option, then its value wins', () => {
    expect(withServiceFlags(['--max-semi-space-size=16'], '')).toEqual(['--max-semi-space-size=16']);
    expect(withServiceFlags([], '--enable-source-maps --max-semi-space-size=8')).toEqual([]);
  });
});

describe('withServiceEnv', () => {
  test('when the environment does not set them, then the malloc settings are added and the rest stays', () => {
    expect(withServiceEnv({ PATH: '/bin' })).toEqual({ ...SERVICE_ENV, PATH: '/bin' });
  });

  test("when the environment sets one, then the environment's value wins", () => {
    expect(withServiceEnv({ MALLOC_MMAP_THRESHOLD_: '262144' }).MALLOC_MMAP_THRESHOLD_).toBe('262144');
  });
});

describe('applyRuntimeFlags', () => {
  test('when nothing sets them, then the service sets its runtime flags on itself', () => {
    const set: string[] = [];
    expect(applyRuntimeFlags((f) => set.push(f), [], '')).toEqual([...SERVICE_RUNTIME_FLAGS]);
    expect(set).toEqual([...SERVICE_RUNTIME_FLAGS]);
  });

  test('when the command line or NODE_OPTIONS sets the same option, then it is left alone', () => {
    const set: string[] = [];
    expect(applyRuntimeFlags((f) => set.push(f), ['--heap-growing-percent=300'], '')).toEqual([]);
    expect(applyRuntimeFlags((f) => set.push(f), [], '--heap-growing-percent=300')).toEqual([]);
    expect(set).toEqual([]);
  });
});

test("the Docker image's CMD starts the service with the same flags and malloc settings", () => {
  const lines = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8').split('\n');
  const cmd = lines.find((line) => line.startsWith('CMD '));
  for (const [name, value] of Object.entries(SERVICE_ENV)) expect(lines).toContain(`ENV ${name}=${value}`);
  expect(JSON.parse(cmd?.slice('CMD '.length) ?? '[]')).toEqual([
    'node',
    ...SERVICE_NODE_FLAGS,
    'dist/src/main.js',
  ]);
});
