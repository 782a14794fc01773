// RaftStorage kept in memory, for tests and simulations: same semantics as LevelStorage
// (suffix overwrite, snapshot + compaction), nothing survives the process.
import type { Entry, HardState, SnapshotMeta } from '../core/types';
import type { PersistedState, RaftStorage } from '../interfaces';

export class MemoryStorage implements RaftStorage {
  private hardState: HardState = { term: 0, vote: null, commit: 0 };
  private snapshot: { meta: SnapshotMeta; data: Uint8Array } | undefined;
  private entries: Entry[] = [];
  private closed = false;

  async load(): Promise<PersistedState> {
    this.assertOpen();
    return {
      hardState: { ...this.hardState },
      snapshot: this.snapshot ? { meta: this.snapshot.meta, data: this.snapshot.data } : undefined,
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

  async saveSnapshot(meta: SnapshotMeta, data: Uint8Array, compactTo: number): Promise<void> {
    this.assertOpen();
    this.snapshot = { meta, data };
    const atSnapshot = this.entries.find((e) => e.index === meta.index);
    // Raft §7: a log that disagrees with the snapshot at its last index is discarded whole.
    if (!atSnapshot || atSnapshot.term !== meta.term) {
      this.entries = [];
      return;
    }
    this.entries = this.entries.filter((e) => e.index > compactTo);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('storage is closed');
  }
}
