// snapshotIntervalMs (Consul's raft_snapshot_interval): under a write load a server snapshots at
// most once per interval..2×interval — not every snapshotThreshold entries, and not at the same
// moment as the other servers — yet the log bound still forces one, and a quiet server with enough
// applied entries still takes one when its interval comes round.
import { InMemoryNetwork, MemoryStorage, RaftNode } from '@registry/raft';
import { bytes, Cluster, ListFsm, waitFor } from './cluster-harness';

let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.shutdown();
  cluster = undefined;
});

type Stats = { snapshotsTaken: number; lastSnapshotIndex: number; lastIndex: number; appliedIndex: number };
const stats = (m: { node: { stats(): object } }) => m.node.stats() as Stats;

test('within the interval only the log bound (8 × threshold, plus up to one threshold) takes a snapshot', async () => {
  const threshold = 25;
  cluster = await Cluster.start(3, { snapshotThreshold: threshold, snapshotIntervalMs: 600_000, trailingLogs: 5 });
  const leader = await cluster.leader();
  let written = 0;
  const write = async (n: number) => {
    for (let i = 0; i < n; i++) await leader.node.propose(bytes(`v${written++}`));
  };
  // Far past the threshold, below the bound: no snapshot anywhere (without the interval: one per 25).
  await write(7 * threshold);
  await waitFor(() => cluster!.members.every((m) => m.fsm.items.length === written));
  for (const m of cluster.members) expect(stats(m).snapshotsTaken).toBe(0);
  // Past the largest bound (8 × 25 + 24 applied entries, counting the bootstrap entries too).
  await write(2 * threshold + 10);
  await waitFor(() => cluster!.members.every((m) => stats(m).snapshotsTaken === 1), 10_000, 'one snapshot on every server');
  for (const m of cluster.members) {
    const s = stats(m);
    expect(s.lastSnapshotIndex).toBeGreaterThanOrEqual(8 * threshold);
    expect(s.lastSnapshotIndex).toBeLessThan(9 * threshold + 5);
  }
});

test('the log bound staggers the voters: each snapshots at its own place within a threshold, one after another', async () => {
  const threshold = 24;
  cluster = await Cluster.start(3, { snapshotThreshold: threshold, snapshotIntervalMs: 600_000, trailingLogs: 5 });
  const leader = await cluster.leader();
  let written = 0;
  const write = async (n: number) => {
    for (let i = 0; i < n; i++) await leader.node.propose(bytes(`v${written++}`));
  };
  // Two rounds of the bound: the phases hold from one snapshot to the next.
  for (const round of [1, 2]) {
    await write(round === 1 ? 9 * threshold + 4 : 8 * threshold + 4);
    await waitFor(() => cluster!.members.every((m) => stats(m).snapshotsTaken === round), 10_000, `snapshot ${round} on every server`);
    // Voters rank by id (0, 1, 2 of 3): their phases are 0, 8 and 16 of each 24 entries. Entries are
    // proposed one at a time, so a server applies them one by one and takes at its bound — or a few
    // entries past it, when a follower that fell behind on a busy machine (a full test run) applies
    // several in one batch: the take comes at the batch's end. Each stays within its own third.
    const byRank = [...cluster.members].sort((a, b) => (a.id < b.id ? -1 : 1)).map((m) => stats(m).lastSnapshotIndex);
    byRank.forEach((index, rank) => {
      expect(index % threshold).toBeGreaterThanOrEqual(rank * 8);
      expect(index % threshold).toBeLessThan(rank * 8 + 8);
    });
    for (const index of byRank) {
      expect(index).toBeGreaterThanOrEqual(8 * threshold * round);
      expect(index).toBeLessThan(9 * threshold * round);
    }
  }
});

test('a quiet server with threshold entries applied snapshots when its interval comes round', async () => {
  cluster = await Cluster.start(3, { snapshotThreshold: 20, snapshotIntervalMs: 300, trailingLogs: 5 });
  const leader = await cluster.leader();
  await Promise.all(Array.from({ length: 30 }, (_, i) => leader.node.propose(bytes(`q${i}`))));
  // No more writes: the tick notices the interval has passed (300–600 ms after start or the last one).
  await waitFor(() => cluster!.members.every((m) => stats(m).snapshotsTaken >= 1), 5_000, 'a snapshot on every server');
  for (const m of cluster.members) expect(stats(m).lastSnapshotIndex).toBeGreaterThanOrEqual(20);
});

test('rejects a negative or fractional interval', async () => {
  const net = new InMemoryNetwork();
  const create = (snapshotIntervalMs: number) =>
    RaftNode.create({ id: 'solo', storage: new MemoryStorage(), transport: net.transport(), fsm: new ListFsm(), snapshotIntervalMs });
  await expect(create(-1)).rejects.toThrow(/snapshotIntervalMs/);
  await expect(create(1.5)).rejects.toThrow(/snapshotIntervalMs/);
});
