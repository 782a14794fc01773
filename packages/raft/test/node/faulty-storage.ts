// A RaftStorage that fails on demand (a full disk, no file descriptors left) and keeps a mirror of
// what it really holds, so tests can check that a node never acknowledges what is not durable.
import { MemoryStorage, type Entry, type HardState, type PersistedState, type RaftStorage, type SnapshotMeta } from '@registry/raft';

export type Op = 'append' | 'saveSnapshot';

/** An error shaped like LevelDB's on a full disk. */
export function enospc(): Error {
  return Object.assign(new Error('IO error: /data/db/000042.log: No space left on device'), { code: 'LEVEL_IO_ERROR' });
}

export class FaultyStorage implements RaftStorage {
  private readonly inner = new MemoryStorage();
  private failing: { ops: Op[]; error: () => Error } | null = null;
  /** What is durable: the last written hard state and the term of every stored entry by index. */
  durableHard: HardState = { term: 0, vote: null, commit: 0 };
  durableSnapshotIndex = 0;
  private readonly durableTerms = new Map<number, number>();
  failures = 0;
  writes = 0;

  /** From now on, `ops` fail with `error()` until heal(). */
  fail(error: () => Error = enospc, ops: Op[] = ['append', 'saveSnapshot']): void {
    this.failing = { ops, error };
  }

  heal(): void {
    this.failing = null;
  }

  get durableLastIndex(): number {
    let last = this.durableSnapshotIndex;
    for (const i of this.durableTerms.keys()) last = Math.max(last, i);
    return last;
  }

  durableTermAt(index: number): number | undefined {
    return this.durableTerms.get(index);
  }

  load(): Promise<PersistedState> {
    return this.inner.load();
  }

  async append(hardState: HardState | undefined, entries: Entry[]): Promise<void> {
    this.check('append');
    await this.inner.append(hardState, entries);
    this.writes++;
    if (hardState) this.durableHard = { ...hardState };
    if (entries.length > 0) {
      for (const i of [...this.durableTerms.keys()]) if (i >= entries[0].index) this.durableTerms.delete(i);
      for (const e of entries) this.durableTerms.set(e.index, e.term);
    }
  }

  async saveSnapshot(meta: SnapshotMeta, data: Uint8Array, compactTo: number): Promise<void> {
    this.check('saveSnapshot');
    await this.inner.saveSnapshot(meta, data, compactTo);
    this.writes++;
    this.durableSnapshotIndex = Math.max(this.durableSnapshotIndex, meta.index);
    if (this.durableTerms.get(meta.index) !== meta.term) this.durableTerms.clear();
    for (const i of [...this.durableTerms.keys()]) if (i <= compactTo) this.durableTerms.delete(i);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private check(op: Op): void {
    if (this.failing && this.failing.ops.includes(op)) {
      this.failures++;
      throw this.failing.error();
    }
  }
}
