// A wiped follower caught up by a snapshot that travels from file to file (issue #34): the leader
// reads its snapshot file a piece at a time, and the follower writes each piece straight into a new
// snapshot file as it arrives — the file on its disk grows piece by piece while the transfer is under
// way — which becomes its stored snapshot when the core installs it, and is restored from there.
// Before, the follower kept every piece in memory until the last one came (the whole state), then
// saved them. Three servers over TCP with WalStorage (snapshot files under db/snapshots).
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LevelStorage, WalStorage, type RaftStorage, type SnapshotData, type SnapshotMeta, type StorageSnapshotSink } from '@registry/raft';
import { Cluster, waitFor, write } from './cluster-harness';

jest.setTimeout(60_000);

/** What a server's storage was asked to do with snapshots. */
interface Seen {
  /** compactTo of every saveSnapshot (Infinity: a snapshot from the leader, saved whole). */
  saved: number[];
  /** For each piece written into a sink: bytes written so far, and the temporary files' size on disk after it. */
  streamed: { written: number; onDisk: number }[];
}

const seen = new Map<string, Seen>();

function observed(dir: string, id: string): RaftStorage {
  const inner = new WalStorage({ dir: join(dir, 'wal'), snapshots: new LevelStorage({ path: join(dir, 'db') }), segmentBytes: 64 << 10 });
  const s: Seen = { saved: [], streamed: [] };
  seen.set(id, s);
  const temporaryBytes = () =>
    readdirSync(join(dir, 'db', 'snapshots'))
      .filter((n) => n.endsWith('.tmp'))
      .reduce((sum, n) => sum + statSync(join(dir, 'db', 'snapshots', n)).size, 0);
  return {
    load: () => inner.load(),
    loadWithoutSnapshotData: () => inner.loadWithoutSnapshotData(),
    append: (h, e) => inner.append(h, e),
    readSnapshot: () => inner.readSnapshot(),
    close: () => inner.close(),
    saveSnapshot: (meta: SnapshotMeta, data: SnapshotData, compactTo: number) => {
      s.saved.push(compactTo);
      return inner.saveSnapshot(meta, data, compactTo);
    },
    createSnapshot: (meta: SnapshotMeta, compactTo: number): StorageSnapshotSink => {
      const sink = inner.createSnapshot(meta, compactTo);
      return {
        get size() {
          return sink.size;
        },
        write: async (chunk) => {
          await sink.write(chunk);
          s.streamed.push({ written: sink.size, onDisk: temporaryBytes() });
        },
        commit: () => sink.commit(),
        abort: () => sink.abort(),
      };
    },
  };
}

let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.shutdown();
  cluster = undefined;
  seen.clear();
});

test('a wiped follower writes the leader\'s pieces straight into its snapshot file and restores from it', async () => {
  cluster = await Cluster.start(3, { tickMs: 20, snapshotThreshold: 20, trailingLogs: 2, snapshotChunkBytes: 2048 }, observed);
  const leader = await cluster.leader();
  const victim = cluster.members.find((m) => m !== leader)!;
  const value = 'x'.repeat(500);
  for (let i = 0; i < 120; i++) await write(cluster, `${String(i).padStart(3, '0')}-${value}`);
  const others = cluster.members.filter((m) => m !== victim);
  await waitFor(() => others.every((m) => (m.node.stats() as { lastSnapshotIndex: number }).lastSnapshotIndex >= 100), 15_000, 'compacted logs');

  await cluster.stop(victim);
  rmSync(victim.dir, { recursive: true, force: true });
  mkdirSync(victim.dir, { recursive: true });
  await cluster.restart(victim);
  const s = seen.get(victim.id)!;
  await waitFor(() => victim.fsm.items.length === leader.fsm.items.length, 20_000, 'the wiped follower caught up');
  expect(victim.fsm.items).toEqual(leader.fsm.items);
  expect(victim.fsm.restoredFrom.length).toBeGreaterThanOrEqual(1);

  // ~60 KB of state in 2 KiB pieces: the file grew with every piece, none was held back in memory.
  expect(s.streamed.length).toBeGreaterThan(20);
  for (let i = 0; i < s.streamed.length; i++) {
    expect(s.streamed[i].onDisk).toBeGreaterThanOrEqual(s.streamed[i].written);
    if (i > 0 && s.streamed[i].written > s.streamed[i - 1].written) expect(s.streamed[i].onDisk).toBeGreaterThan(s.streamed[i - 1].onDisk);
  }
  // Nothing from the leader was saved whole; the stored snapshot is one file, read back whole.
  expect(s.saved.filter((c) => c === Infinity)).toEqual([]);
  expect(readdirSync(join(victim.dir, 'db', 'snapshots')).filter((n) => n.endsWith('.snap'))).toHaveLength(1);
  const reader = (await victim.node['opts'].storage.readSnapshot!())!;
  reader.close();
  expect(reader.size).toBeGreaterThan(50_000);
});
