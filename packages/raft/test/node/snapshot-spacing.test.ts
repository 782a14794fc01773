// Serialising the state machine blocks the event loop, so a node under a heavy write load
// spaces its snapshots (≤ ~1 % of the time) instead of taking one every snapshotThreshold
// entries — while still bounding the log — and keeps committing while a snapshot is written.
import { bytes, Cluster, ListFsm, waitFor } from './cluster-harness';

let cluster: Cluster | undefined;
const originalSnapshot = ListFsm.prototype.snapshot;
afterEach(async () => {
  ListFsm.prototype.snapshot = originalSnapshot;
  await cluster?.shutdown();
  cluster = undefined;
});

/** A state machine whose snapshot costs `ms` of blocked event loop, like a large store. */
function slowSnapshots(ms: number): void {
  ListFsm.prototype.snapshot = function (this: ListFsm) {
    const until = performance.now() + ms;
    while (performance.now() < until) {
      // busy: the cost being modelled is synchronous serialisation
    }
    return originalSnapshot.call(this);
  };
}

test('a costly snapshot is not retaken every threshold entries, yet the log stays bounded', async () => {
  slowSnapshots(40); // → at least ~4 s between time-spaced snapshots
  cluster = await Cluster.start(3, { snapshotThreshold: 20, trailingLogs: 5 });
  const leader = await cluster.leader();
  for (let round = 0; round < 8; round++) {
    await Promise.all(Array.from({ length: 50 }, (_, i) => leader.node.propose(bytes(`r${round}-${i}`))));
  }
  await waitFor(() => cluster!.members.every((m) => m.fsm.items.length === 400));
  const stats = leader.node.stats() as { snapshotsTaken: number; lastSnapshotIndex: number; lastIndex: number };
  // Without spacing: one per 20 entries (≈ 20). With it: the first, then one per 8 × 20 entries.
  await waitFor(() => (leader.node.stats() as { snapshotsTaken: number }).snapshotsTaken >= 2);
  expect(stats.snapshotsTaken).toBeLessThanOrEqual(5);
  expect(stats.lastIndex - stats.lastSnapshotIndex).toBeLessThanOrEqual(8 * 20 + 50);
});

test('a restarted server recovers every write from a snapshot written in the background', async () => {
  cluster = await Cluster.start(3, { snapshotThreshold: 25, trailingLogs: 10 });
  const leader = await cluster.leader();
  for (let i = 0; i < 120; i++) await leader.node.propose(bytes(`v${i}`));
  await waitFor(() => (leader.node.stats() as { snapshotsTaken: number }).snapshotsTaken > 0);
  const follower = cluster.members.find((m) => m !== leader)!;
  await cluster.stop(follower);
  await cluster.restart(follower);
  await waitFor(() => follower.fsm.items.length === 120);
  expect(follower.fsm.items).toEqual(leader.fsm.items);
});
