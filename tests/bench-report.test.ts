// The benchmark's ratios (bench/report.ts): runs of the same round are paired, so that a VM that drifts
// between rounds does not move the ratio.
import { median } from '../bench/load';
import { addRatios, checks, type Row, ratio } from '../bench/report';

const rowOf = (target: string, rounds: number[], scenario = 'GET string'): Row => ({
  scenario,
  target,
  reqPerSec: rounds.length > 0 ? median(rounds) : null,
  opsPerSec: null,
  p50Ms: 1,
  p99Ms: 10,
  maxRssMb: 100,
  vsExpress: null,
  vsNode: null,
  serverCpuPercent: null,
  loadgenCpuPercent: null,
  redisCpuPercent: null,
  cpuUsPerRequest: null,
  rounds,
});

test('when the machine slows down between rounds, then the paired ratio stays that of each round', () => {
  // Each round the service does 0.8 x (a), but the rounds ran at different speeds.
  const express = rowOf('baseline (a) express', [10_000, 5_000, 8_000]);
  const service = rowOf('service', [8_000, 4_000, 6_400]);
  expect(ratio(service, express)).toBeCloseTo(0.8);
  // The ratio of the medians would have said 6,400 / 8,000 too here; with the slow round elsewhere it does not:
  const drifted = rowOf('service', [4_000, 8_000, 6_400]);
  const base = rowOf('baseline (a) express', [5_000, 10_000, 8_000]);
  expect(ratio(drifted, base)).toBeCloseTo(0.8);
});

test('when the rows have different rounds, then the ratio is that of the medians', () => {
  expect(ratio(rowOf('service', [6_000]), rowOf('baseline (a) express', [10_000, 8_000, 9_000]))).toBeCloseTo(
    6_000 / 9_000,
  );
  expect(ratio(rowOf('service', []), rowOf('baseline (a) express', [10_000]))).toBeNull();
});

test('when the targets are checked, then the ratios are the paired ones', () => {
  const rows = [
    rowOf('baseline (a) express', [10_000, 5_000, 8_000]),
    rowOf('service', [8_000, 4_000, 6_400]),
    rowOf('service SVC_WORKERS=2', [12_000, 5_000, 8_320]),
  ];
  addRatios(rows);
  expect(rows[1]?.vsExpress).toBe(0.8);
  const found = checks(rows, [], 4);
  expect(found.find((c) => c.target.startsWith('GET string: req/s'))).toMatchObject({
    measured: '0.80 x',
    pass: false,
  });
  expect(found.find((c) => c.target.startsWith('SVC_WORKERS=2'))).toMatchObject({
    measured: '1.30 x',
    pass: true,
  });
});

test('when the machine has fewer than 4 CPUs, then the workers target does not apply and the CPU budget is said', () => {
  const express = rowOf('baseline (a) express', [10_000]);
  const workers = {
    ...rowOf('service SVC_WORKERS=2', [11_000]),
    serverCpuPercent: 139,
    redisCpuPercent: 17,
    loadgenCpuPercent: 26,
  };
  const found = checks([express, rowOf('service', [10_000]), workers], [], 2);
  expect(found.find((c) => c.target.startsWith('SVC_WORKERS=2'))).toEqual({
    target: 'SVC_WORKERS=2: >= 1.3 x one process (with 4+ CPUs)',
    measured: '1.10 x; 2 CPUs full: service 139 % + redis 17 % + load generator 26 % = 182 % of 200 %',
    pass: null,
  });
});

test("when baseline (b) ran the batch, then the batch's line names that floor and its CPU budget", () => {
  const batch = (target: string, rps: number) => ({
    ...rowOf(target, [rps], 'string batch (100 sets)'),
    opsPerSec: rps * 100,
    serverCpuPercent: 90,
    redisCpuPercent: 50,
    loadgenCpuPercent: 15,
  });
  const found = checks([batch('service', 800), batch('baseline (b) node+ioredis', 1_900)], [], 2);
  expect(found.find((c) => c.target.startsWith('string batch: ops/s'))).toEqual({
    target: 'string batch: ops/s >= 0.8 x the floor (b)',
    measured:
      '80,000 ops/s, 0.42 x (service 90 % + redis 50 % + load generator 15 % = 155 % of 200 %); floor (b) 190,000 ops/s, service 90 % + redis 50 % + load generator 15 % = 155 % of 200 %',
    pass: false,
  });
  // Redis's CPU per batch: 50 % of a core over 800 batches a second against 1,900 (issue 36).
  expect(found.find((c) => c.target.startsWith('string batch (100 sets): redis'))).toEqual({
    target: 'string batch (100 sets): redis µs/req <= 1.2 x (b)',
    measured: '625.0 vs 263.2 µs, 2.38 x',
    pass: false,
  });
});
