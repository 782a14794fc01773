// RaftStorage kept in memory, for tests and simulations: same semantics as LevelStorage
// (suffix overwrite, snapshot + compaction, snapshots stored in pieces), nothing survives the process.
import type { Entry, HardState, SnapshotMeta } from '../core/types';
import type { PersistedState, RaftStorage, SnapshotData, SnapshotReader, StorageSnapshotSink } from '../interfaces';
import { joinSnapshot, snapshotPieces } from './snapshot-chunks';

interface StoredSnapshot {
  meta: SnapshotMeta;
  chunks: readonly Uint8Array[];
  size: number;
}

export class MemoryStorage implements RaftStorage {
  private hardState: HardState = { term: 0, vote: null, commit: 0 };
  private snapshot: StoredSnapshot | undefined;
  private entries: Entry[] = [];
  private closed = false;

  async load(): Promise<PersistedState> {
    this.assertOpen();
    return {
      hardState: { ...this.hardState },
      snapshot: this.snapshot ? { meta: this.snapshot.meta, data: joinSnapshot(this.snapshot.chunks) } : undefined,
      entries: this.entries.slice(),
    };
  }

  async append(hardState: HardState | undefined, entries: Entry[]): Promise<void> {
    this.assertOpen();
    if (hardState) this.hardState = { ...hardState };
    if (entries.length === 0) return;
    const first = entries[0].index;
    // Keep everything before the first new index; the new entries replace the rest.
    this.entries = this.entries.filter((e) => e.index < first).concat(entries);
  }

  async saveSnapshot(meta: SnapshotMeta, data: SnapshotData, compactTo: number): Promise<void> {
    this.assertOpen();
    // The caller's pieces are kept as they are (no copy): a snapshot's bytes are never changed.
    const chunks = [...snapshotPieces(data)];
    this.install({ meta, chunks, size: chunks.reduce((n, c) => n + c.length, 0) }, compactTo);
  }

  createSnapshot(meta: SnapshotMeta, compactTo: number): StorageSnapshotSink {
    const chunks: Uint8Array[] = [];
    let size = 0;
    let state: 'open' | 'done' = 'open';
    const open = () => {
      this.assertOpen();
      if (state !== 'open') throw new Error('snapshot sink is already committed or aborted');
    };
    return {
      get size() {
        return size;
      },
      write: async (chunk) => {
        open();
        // A copy: the writer may reuse the chunk's memory once this resolves.
        chunks.push(Uint8Array.prototype.slice.call(chunk));
        size += chunk.length;
      },
      commit: async () => {
        open();
        state = 'done';
        this.install({ meta, chunks, size }, compactTo);
      },
      abort: async () => {
        state = 'done';
      },
    };
  }

  async readSnapshot(): Promise<SnapshotReader | undefined> {
    this.assertOpen();
    const snap = this.snapshot;
    if (!snap) return undefined;
    return {
      meta: snap.meta,
      size: snap.size,
      chunks: snap.chunks.length,
      read: async (i) => {
        if (i < 0 || i >= snap.chunks.length) throw new Error(`snapshot piece ${i} out of range`);
        return snap.chunks[i];
      },
      close: () => undefined,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private install(snapshot: StoredSnapshot, compactTo: number): void {
    const { meta } = snapshot;
    this.snapshot = snapshot;
    const atSnapshot = this.entries.find((e) => e.index === meta.index);
    // Raft §7: a log that disagrees with the snapshot at its last index is discarded whole.
    if (!atSnapshot || atSnapshot.term !== meta.term) {
      this.entries = [];
      return;
    }
    this.entries = this.entries.filter((e) => e.index > compactTo);
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('storage is closed');
  }
}
