// scavengeAbove(bytes): between a long job's slices (a restore's, issue #34) it empties V8's young
// generation once it holds more than `bytes` over what the last scavenge left, and leaves it alone
// below that. Whether it scavenged is read from V8's own GC entries (perf_hooks), timed inside the
// call: the young generation's size alone depends on what else the test process holds.
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { scavengeAbove } from '@registry/server';

const youngUsed = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_used_size;

/** Objects kept alive, so that the young generation holds them until a scavenge promotes them. */
function allocate(count: number): object[] {
  const kept: object[] = [];
  for (let i = 0; i < count; i++) kept.push({ i, s: `k${i}` });
  return kept;
}

/** How many scavenges V8 reports as started while `call` ran. */
async function scavengesDuring(call: () => void): Promise<number> {
  const starts: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if ((e as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) starts.push(e.startTime);
  });
  observer.observe({ entryTypes: ['gc'] });
  const from = performance.now();
  call();
  const to = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 50)); // entries arrive after the GC, asynchronously
  observer.disconnect();
  return starts.filter((t) => t >= from && t <= to).length;
}

test('scavenges once the young generation holds more than the budget', async () => {
  const kept = allocate(50_000);
  expect(youngUsed()).toBeGreaterThan(1024 * 1024);
  expect(await scavengesDuring(scavengeAbove(512 * 1024))).toBeGreaterThanOrEqual(1);
  expect(kept.length).toBe(50_000);
});

test('leaves the young generation alone under the budget', async () => {
  const kept = allocate(1_000);
  expect(await scavengesDuring(scavengeAbove(1024 * 1024 * 1024))).toBe(0);
  expect(kept.length).toBe(1_000);
});

test('counts the budget from what the last scavenge left, not from empty', async () => {
  const kept = allocate(200_000);
  // Allocated last, so young when the scavenge comes: they survive it once and stay young, well
  // over the budget on their own — a budget counted from empty would scavenge again at once.
  const fresh = allocate(2_000);
  const scavenge = scavengeAbove(16 * 1024);
  expect(
    await scavengesDuring(() => {
      scavenge();
      scavenge();
    }),
  ).toBe(1);
  expect(kept.length + fresh.length).toBe(202_000);
});
