// ops/op.ts `changed`: an operation rebuilt member by member keeps every member it does not change.
import { changed, type Op } from '../src/ops/op';

// Required<Op>: a member added to Op makes this file fail to compile until it is here, and then the test shows
// whether `changed` copies it.
const full: Required<Op> = {
  writes: true,
  keys: ['k'],
  commands: [{ name: 'typedWrite', keys: ['k'], args: ['string'] }],
  result: () => ({ status: 200, body: {} }),
  whenEmpty: async () => ({ status: 200, body: {} }),
  values: ['value'],
  pops: true,
  reread: () => full,
};

test('changed keeps every member of an operation that it is not asked to change', () => {
  expect(changed(full, {})).toEqual(full);
  const result = () => ({ status: 201 as const, body: {} });
  expect(changed(full, { result })).toEqual({ ...full, result });
});

test('changed leaves out an optional member set to undefined, as a spread would leave it undefined', () => {
  const out = changed(full, { whenEmpty: undefined });
  expect(out.whenEmpty).toBeUndefined();
  expect(out.values).toEqual(['value']);
});
