// The old generation's headroom: after each full GC it may grow by at most 24 MB (and by 50-150 % of what survived).
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

const MB = 1024 * 1024;
/**
 * With a fixed factor (--heap-growing-percent=150: 2.5 x) the old generation's size follows the live heap: under
 * 50 connections of Upstash pipelines or batches the live heap is ~27 MB (19 after start, plus the requests in
 * flight), so 67 MB of objects and ~80 MB of pages before the next full GC, on top of what the other scenarios left
 * (docs/performance.md, "Memory"). A headroom in megabytes keeps the 2.5 x of a small heap and bounds a larger one.
 */
export const HEADROOM_BYTES = 24 * MB;
/** 150: the factor the service sets at start (node-flags.ts). 50: a full GC for every half of the live heap allocated,
 * so that a large live heap (many 1 MiB values in flight) does not pay a full GC for every few megabytes. */
const PERCENT = { min: 50, max: 150 };

/** The --heap-growing-percent under which an old generation of `live` bytes grows by HEADROOM_BYTES, within bounds. */
export const growingPercent = (live: number): number =>
  Math.min(PERCENT.max, Math.max(PERCENT.min, Math.floor((100 * HEADROOM_BYTES) / Math.max(live, 1))));

/** What the old generation holds now: every space but the young generation's. */
function oldGenerationBytes(): number {
  let bytes = 0;
  for (const space of v8.getHeapSpaceStatistics())
    if (!space.space_name.startsWith('new_')) bytes += space.space_used_size;
  return bytes;
}

const isMajor = (entry: PerformanceEntry) =>
  (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ===
  constants.NODE_PERFORMANCE_GC_MAJOR;

/**
 * After each full GC, sets --heap-growing-percent from what survived it; V8 reads the flag when the next full GC
 * sets the limit after it, and the live heap changes little from one to the next. Its 'gc' entries are read soon
 * after the GC, when the old generation has grown only by what scavenges promoted meanwhile.
 */
export function limitHeapHeadroom(set: (flag: string) => void = v8.setFlagsFromString): PerformanceObserver {
  let current = PERCENT.max;
  const observer = new PerformanceObserver((list) => {
    if (!list.getEntries().some(isMajor)) return;
    const percent = growingPercent(oldGenerationBytes());
    if (percent === current) return;
    current = percent;
    set(`--heap-growing-percent=${percent}`);
  });
  observer.observe({ entryTypes: ['gc'] });
  return observer;
}
