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

test('when the hand-written fragments are counted, then they are at most 2,893 lines (40 % of the old hand-kept file)', () => {
  const lines = fragmentFiles().reduce((n, f) => n + readFileSync(f, 'utf8').split('\n').length - 1, 0);
  expect(lines).toBeLessThanOrEqual(2893);
});
