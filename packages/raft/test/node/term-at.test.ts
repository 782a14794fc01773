// RaftNode.termAt(index): the term of the log entry at an index — what a backup's meta names as
// its Term (server snapshot/snapshots.ts) — stays that entry's term after a new leader's term began.
import { Cluster, waitFor, write } from './cluster-harness';

let cluster: Cluster;
afterEach(async () => {
  await cluster?.shutdown();
});

test('termAt gives the term an entry was written in, not the current term', async () => {
  cluster = await Cluster.start(3);
  const first = await cluster.leader();
  await write(cluster, 'a');
  const index = first.node.appliedIndex();
  const written = first.node.term();
  await waitFor(() => cluster.members.every((m) => m.node.appliedIndex() >= index));
  for (const m of cluster.members) expect(m.node.termAt(index)).toBe(written);

  // A new leader: a higher term, and its no-op after the entry; the entry keeps its term everywhere.
  const target = cluster.members.find((m) => m !== first)!;
  await first.node.transferLeadership(target.id, 5000);
  await waitFor(() => target.node.isLeader() && cluster.members.every((m) => m.node.term() > written));
  for (const m of cluster.members) {
    expect(m.node.term()).toBeGreaterThan(written);
    expect(m.node.termAt(index)).toBe(written);
  }
  // Beyond the log: unknown.
  expect(first.node.termAt(first.node.lastIndex() + 10)).toBeUndefined();
});
