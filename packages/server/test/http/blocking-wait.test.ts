// The spec's Limits rows for blocking queries: default wait 5 minutes, at most 10 minutes, plus up
// to wait/16 of jitter.
import { effectiveWait } from '../../src/rpc/blocking';

const MIN = 60_000;

test('no wait (or 0) means 5 minutes; jitter adds up to wait/16', () => {
  expect(effectiveWait(undefined, () => 0)).toBe(5 * MIN);
  expect(effectiveWait(0, () => 0)).toBe(5 * MIN);
  expect(effectiveWait(undefined, () => 0.999999)).toBe(5 * MIN + Math.floor(0.999999 * ((5 * MIN) / 16)));
});

test('a wait above 10 minutes is capped at 10 minutes (before jitter)', () => {
  expect(effectiveWait(60 * MIN, () => 0)).toBe(10 * MIN);
  expect(effectiveWait(60 * MIN, () => 0.5)).toBe(10 * MIN + (10 * MIN) / 32);
});

test('a short wait is kept, its jitter below wait/16', () => {
  for (let i = 0; i < 100; i++) {
    const w = effectiveWait(1600);
    expect(w).toBeGreaterThanOrEqual(1600);
    expect(w).toBeLessThan(1700);
  }
});
