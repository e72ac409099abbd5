// Files at the project root (openapi.yaml, package.json), found from src/ (tests) or dist/src/ (built).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The first `name` in this directory or one above it. */
export function findUp(name: string, dir = __dirname): string {
  const candidate = join(dir, name);
  if (existsSync(candidate) || dirname(dir) === dir) return candidate;
  return findUp(name, dirname(dir));
}

export const OPENAPI_FILE = findUp('openapi.yaml');
export const PACKAGE_FILE = findUp('package.json');
