// openapi.yaml is generated (`npm run contract`): the committed file is the generator's output, and the words a
// person keeps by hand (contract/*.yaml) stay a small part of it.
import { readFileSync, writeFileSync } from 'node:fs';
import { CONTRACT_FILE, fragmentFiles, generateContract } from '../src/contract-gen/generate';

test('when openapi.yaml is compared with what the declarations and fragments generate, then it is the same', () => {
  const generated = generateContract();
  // `npm run contract` runs this test with UPDATE_CONTRACT=1 to rewrite the file.
  if (process.env.UPDATE_CONTRACT === '1') writeFileSync(CONTRACT_FILE, generated);
  expect(readFileSync(CONTRACT_FILE, 'utf8')).toBe(generated);
});

// 2,893 lines were 40 % of the old hand-kept file; each new group of routes adds its own words (locks, semaphores and leases: 256, ratelimits: 130).
test('when the hand-written fragments are counted, then they are at most 3,279 lines', () => {
  const lines = fragmentFiles().reduce((n, f) => n + readFileSync(f, 'utf8').split('\n').length - 1, 0);
  expect(lines).toBeLessThanOrEqual(2893 + 256 + 130);
});
