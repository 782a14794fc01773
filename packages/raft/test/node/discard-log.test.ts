// RaftNode.discardLogThrough(index) (issue #34): once a state machine's whole state was replaced at
// `index` (a restore), the entries through it are of no further use. Each server takes a snapshot as
// soon as `index` is applied and compacts its log through it, whatever trailingLogs would keep; a
// follower that was down through all of it is sent that snapshot, and writes go on.
import { bytes, Cluster, waitFor } from './cluster-harness';

let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.shutdown();
  cluster = undefined;
});

type Stats = { snapshotsTaken: number; lastSnapshotIndex: number };
const stats = (m: { node: { stats(): object } }) => m.node.stats() as Stats;

test('a snapshot is taken at once and the log compacted through the index, past trailingLogs', async () => {
  cluster = await Cluster.start(3, { snapshotThreshold: 100_000, trailingLogs: 100_000 });
  const leader = await cluster.leader();
  const down = cluster.members.find((m) => m !== leader)!;
  for (let i = 0; i < 30; i++) await leader.node.propose(bytes(`a${i}`));
  await waitFor(() => cluster!.members.every((m) => m.fsm.items.length === 30), 10_000, 'applied everywhere');
  await cluster.stop(down);
  for (let i = 30; i < 40; i++) await leader.node.propose(bytes(`a${i}`));
  const through = leader.node.appliedIndex();
  const up = cluster.running();
  const compacted: boolean[] = [];
  for (const m of up) {
    expect(m.node.firstLogIndex()).toBeLessThanOrEqual(1);
    // Resolves once this server's log no longer holds the entries (the agent then has V8 collect them).
    void m.node.discardLogThrough(through).then(() => compacted.push(m.node.firstLogIndex() > through));
  }
  await waitFor(() => compacted.length === up.length, 10_000, 'logs compacted through the index');
  expect(compacted).toEqual(up.map(() => true));
  for (const m of up) {
    expect(stats(m).snapshotsTaken).toBe(1);
    expect(stats(m).lastSnapshotIndex).toBeGreaterThanOrEqual(through);
  }
  // A second call for the same index takes no second snapshot.
  for (const m of up) m.node.discardLogThrough(through);
  await leader.node.propose(bytes('after'));
  await waitFor(() => up.every((m) => m.fsm.items.includes('after')), 10_000, 'a write after');
  for (const m of up) expect(stats(m).snapshotsTaken).toBe(1);

  // The follower that was down is behind the compacted log: it is sent the snapshot.
  await cluster.restart(down);
  await waitFor(() => down.fsm.items.length === 41, 15_000, 'the stopped follower caught up');
  expect(down.fsm.items).toEqual([...Array.from({ length: 40 }, (_, i) => `a${i}`), 'after']);
  expect(down.fsm.restoredFrom.at(-1)).toBeGreaterThanOrEqual(through);
});
