// A wiped follower decodes the leader's snapshot while its pieces arrive (issue #34): each piece,
// once written into the snapshot file, goes to the state machine's stageFrom(), which builds the
// new state beside the current one; when the core installs the snapshot the driver swaps it in
// (commit) instead of reading the file back and decoding it after the transfer. Before, the restore
// began only once the last piece was in. Three servers over TCP with WalStorage; the harness's list
// state machine is given a stageFrom that records when it read each piece.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { LevelStorage, WalStorage, type RaftStorage, type SnapshotMeta, type SnapshotSource, type StagedRestore } from '@registry/raft';
import { Cluster, ListFsm, text, waitFor, write } from './cluster-harness';

jest.setTimeout(60_000);

/** Per server: pieces written into its snapshot sinks so far. */
const written = new Map<string, number>();
/** Per staging: for each piece the decoder read, how many pieces had been written then; and whether it was committed. */
const stagings: { reads: number[]; committed: boolean; total?: number }[] = [];
let stagingOwner = '';

function observed(dir: string, id: string): RaftStorage {
  const inner = new WalStorage({ dir: join(dir, 'wal'), snapshots: new LevelStorage({ path: join(dir, 'db') }), segmentBytes: 64 << 10 });
  written.set(id, 0);
  return {
    load: () => inner.load(),
    loadWithoutSnapshotData: () => inner.loadWithoutSnapshotData(),
    append: (h, e) => inner.append(h, e),
    readSnapshot: () => inner.readSnapshot(),
    close: () => inner.close(),
    saveSnapshot: (meta, data, compactTo) => inner.saveSnapshot(meta, data, compactTo),
    createSnapshot: (meta: SnapshotMeta, compactTo: number) => {
      const sink = inner.createSnapshot(meta, compactTo);
      return {
        get size() {
          return sink.size;
        },
        write: async (chunk: Uint8Array) => {
          await sink.write(chunk);
          if (compactTo === Infinity) written.set(id, written.get(id)! + 1);
        },
        commit: () => sink.commit(),
        abort: () => sink.abort(),
      };
    },
  };
}

/** The list's JSON, decoded once every piece is read (the pieces are read as they come). */
async function stageFrom(this: ListFsm, source: SnapshotSource): Promise<StagedRestore> {
  const record: (typeof stagings)[number] = { reads: [], committed: false };
  stagings.push(record);
  const pieces: Uint8Array[] = [];
  for (let i = 0; i < source.chunks; i++) {
    pieces.push(await source.read(i));
    record.reads.push(written.get(stagingOwner) ?? 0);
  }
  record.total = pieces.length;
  const items = JSON.parse(text(Buffer.concat(pieces))) as string[];
  return {
    commit: () => {
      record.committed = true;
      this.items = items;
    },
  };
}

let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.shutdown();
  cluster = undefined;
  delete (ListFsm.prototype as Partial<{ stageFrom: unknown }>).stageFrom;
});

test('a wiped follower decodes the snapshot while it arrives and swaps it in when the core installs it', async () => {
  (ListFsm.prototype as unknown as { stageFrom: typeof stageFrom }).stageFrom = stageFrom;
  cluster = await Cluster.start(3, { tickMs: 20, snapshotThreshold: 20, trailingLogs: 2, snapshotChunkBytes: 2048 }, observed);
  const leader = await cluster.leader();
  const victim = cluster.members.find((m) => m !== leader)!;
  stagingOwner = victim.id;
  const value = 'x'.repeat(500);
  for (let i = 0; i < 120; i++) await write(cluster, `${String(i).padStart(3, '0')}-${value}`);
  const others = cluster.members.filter((m) => m !== victim);
  await waitFor(() => others.every((m) => (m.node.stats() as { lastSnapshotIndex: number }).lastSnapshotIndex >= 100), 15_000, 'compacted logs');

  await cluster.stop(victim);
  rmSync(victim.dir, { recursive: true, force: true });
  mkdirSync(victim.dir, { recursive: true });
  written.set(victim.id, 0);
  stagings.length = 0;
  await cluster.restart(victim);
  await waitFor(() => victim.fsm.items.length === leader.fsm.items.length, 20_000, 'the wiped follower caught up');
  expect(victim.fsm.items).toEqual(leader.fsm.items);

  // Installed from the staged state, not by reading the stored snapshot back (restore()).
  const used = stagings.filter((s) => s.committed);
  expect(used).toHaveLength(1);
  expect(victim.fsm.restoredFrom).toEqual([]);
  // ~60 KB in 2 KiB pieces: the decoder read the first pieces while later ones were still to come.
  const s = used[0];
  expect(s.total).toBeGreaterThan(20);
  expect(s.reads[0]).toBeLessThan(s.total! / 2);
  // The server keeps working after: later writes reach it too.
  await write(cluster, 'after-install');
  await waitFor(() => victim.fsm.items.length === leader.fsm.items.length, 10_000, 'a later write applied');
  expect(victim.fsm.items[victim.fsm.items.length - 1]).toBe('after-install');
});
