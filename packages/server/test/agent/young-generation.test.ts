// scavengeAbove(bytes): between a long job's slices (a restore's, issue #34) it empties V8's young
// generation once it holds more than `bytes`, and leaves it alone below that.
import { getHeapSpaceStatistics } from 'node:v8';
import { scavengeAbove } from '@registry/server';

const youngUsed = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_used_size;

/** Survivors: objects kept alive, so that a scavenge has something to copy out of the young generation. */
function allocate(count: number): object[] {
  const kept: object[] = [];
  for (let i = 0; i < count; i++) kept.push({ i, s: `k${i}` });
  return kept;
}

test('scavenges once the young generation holds more than the budget', () => {
  const kept = allocate(50_000);
  const before = youngUsed();
  expect(before).toBeGreaterThan(1024 * 1024);
  scavengeAbove(512 * 1024)();
  expect(youngUsed()).toBeLessThan(before / 2);
  expect(kept.length).toBe(50_000);
});

test('leaves the young generation alone under the budget', () => {
  const kept = allocate(1_000);
  const before = youngUsed();
  scavengeAbove(1024 * 1024 * 1024)();
  expect(youngUsed()).toBeGreaterThanOrEqual(before);
  expect(kept.length).toBe(1_000);
});

test('counts the budget from what the last scavenge left, not from empty', () => {
  const kept = allocate(200_000);
  const scavenge = scavengeAbove(256 * 1024);
  scavenge();
  // The survivors of that scavenge stay young until the next one, above the budget on their own.
  const left = youngUsed();
  expect(left).toBeGreaterThan(256 * 1024);
  scavenge();
  expect(youngUsed()).toBeGreaterThanOrEqual(left);
  expect(kept.length).toBe(200_000);
});
