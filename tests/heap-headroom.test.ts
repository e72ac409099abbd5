// The old generation's headroom (src/heap-headroom.ts): the growth factor after a full GC, from what survived it.
import { growingPercent, HEADROOM_BYTES } from '../src/heap-headroom';

const MB = 1024 * 1024;

test('when the live heap is small, then it may grow to 2.5 x (the factor the service starts with)', () => {
  expect(growingPercent(10 * MB)).toBe(150);
  expect(growingPercent(1)).toBe(150);
});

test('when the live heap is larger, then it may grow by the headroom only', () => {
  expect(growingPercent(HEADROOM_BYTES)).toBe(100);
  expect(growingPercent(32 * MB)).toBe(75);
});

test('when the live heap is very large, then it may still grow by half of itself', () => {
  expect(growingPercent(500 * MB)).toBe(50);
});
