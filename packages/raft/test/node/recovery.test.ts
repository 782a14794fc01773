// Failures and restarts of real servers: leader loss, restart from the data dir, catch-up by snapshot.
import { bytes, Cluster, waitFor, write } from './cluster-harness';

let cluster: Cluster;
afterEach(async () => {
  await cluster?.shutdown();
});

test('when the leader stops, another is elected within 10 s and writes continue', async () => {
  cluster = await Cluster.start(3);
  const old = await cluster.leader();
  await write(cluster, 'one');
  await cluster.stop(old);
  const stoppedAt = Date.now();
  const next = await cluster.leader(10_000);
  expect(next.id).not.toBe(old.id);
  expect(Date.now() - stoppedAt).toBeLessThan(10_000);
  await write(cluster, 'two');
  await waitFor(() => cluster.running().every((m) => m.fsm.items.join() === 'one,two'));
});

test('a server restarted from its data dir replays its log and catches up on what it missed', async () => {
  cluster = await Cluster.start(3);
  const leader = await cluster.leader();
  for (let i = 0; i < 30; i++) await leader.node.propose(bytes(`before${i}`));
  const follower = cluster.members.find((m) => m !== leader)!;
  await waitFor(() => follower.fsm.items.length === 30);
  await cluster.stop(follower);
  for (let i = 0; i < 30; i++) await leader.node.propose(bytes(`during${i}`));
  await cluster.restart(follower);
  await waitFor(() => follower.fsm.items.length === 60);
  expect(follower.fsm.items).toEqual(leader.fsm.items);
  expect(follower.node.leader()?.id).toBe(leader.id);
});

test('a follower that fell behind a compaction catches up by installing a snapshot', async () => {
  cluster = await Cluster.start(3, { snapshotThreshold: 40, trailingLogs: 5 });
  const leader = await cluster.leader();
  const follower = cluster.members.find((m) => m !== leader)!;
  for (let i = 0; i < 10; i++) await leader.node.propose(bytes(`early${i}`));
  await waitFor(() => follower.fsm.items.length === 10);
  await cluster.stop(follower);
  for (let i = 0; i < 200; i++) await leader.node.propose(bytes(`late${i}`));
  expect((leader.node.stats() as { lastSnapshotIndex: number }).lastSnapshotIndex).toBeGreaterThan(150);
  await cluster.restart(follower);
  await waitFor(() => follower.fsm.items.length === 210);
  expect(follower.fsm.items).toEqual(leader.fsm.items);
  // Restored from the leader's snapshot, not by replaying the compacted entries.
  expect(follower.fsm.restoredFrom.some((i) => i > 150)).toBe(true);
  // And the follower keeps up with new writes afterwards.
  await leader.node.propose(bytes('after'));
  await waitFor(() => follower.fsm.items.at(-1) === 'after');
});

test('a whole cluster restarted from its data dirs keeps every acknowledged write', async () => {
  cluster = await Cluster.start(3, { snapshotThreshold: 25, trailingLogs: 10 });
  await cluster.leader();
  for (let i = 0; i < 60; i++) await write(cluster, `v${i}`);
  const expected = Array.from({ length: 60 }, (_, i) => `v${i}`);
  for (const m of cluster.members) await cluster.stop(m);
  for (const m of cluster.members) await cluster.restart(m);
  await cluster.leader();
  await write(cluster, 'v60');
  await waitFor(() => cluster.members.every((m) => m.fsm.items.length === 61));
  for (const m of cluster.members) expect(m.fsm.items).toEqual([...expected, 'v60']);
});
