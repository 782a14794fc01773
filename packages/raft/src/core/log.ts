// The core's in-memory copy of the log after the last compaction point, plus
// the bookkeeping of which entries the driver has been handed and persisted.
import type { Entry } from './types';

export class RaftLog {
  /** The index and term of the entry just before `entries[0]` (a snapshot or compaction point). */
  private offsetIndex: number;
  private offsetTerm: number;
  private entries: Entry[] = [];
  /** Entries at or below this index are on the driver's disk and match this log. */
  persisted: number;
  /** The first index not yet handed to the driver in a Ready. */
  private unsentFrom: number;

  constructor(offsetIndex: number, offsetTerm: number, entries: readonly Entry[]) {
    this.offsetIndex = offsetIndex;
    this.offsetTerm = offsetTerm;
    for (const entry of entries) {
      if (entry.index !== this.lastIndex + 1) {
        throw new Error(`log entries are not contiguous: expected index ${this.lastIndex + 1}, got ${entry.index}`);
      }
      this.entries.push(entry);
    }
    this.persisted = this.lastIndex;
    this.unsentFrom = this.lastIndex + 1;
  }

  get firstIndex(): number {
    return this.offsetIndex + 1;
  }

  /** The compaction point: entries at or below it are only in the snapshot. */
  get compactedIndex(): number {
    return this.offsetIndex;
  }

  get lastIndex(): number {
    return this.offsetIndex + this.entries.length;
  }

  get lastTerm(): number {
    return this.entries.length === 0 ? this.offsetTerm : this.entries[this.entries.length - 1].term;
  }

  /** The term of the entry at `index`, or undefined when it is compacted away or not yet written. */
  termAt(index: number): number | undefined {
    if (index === this.offsetIndex) return this.offsetTerm;
    if (index < this.offsetIndex || index > this.lastIndex) return undefined;
    return this.entries[index - this.offsetIndex - 1].term;
  }

  entryAt(index: number): Entry | undefined {
    if (index <= this.offsetIndex || index > this.lastIndex) return undefined;
    return this.entries[index - this.offsetIndex - 1];
  }

  matchTerm(index: number, term: number): boolean {
    return this.termAt(index) === term;
  }

  /** Entries lo..hi inclusive; lo must be above the compaction point. */
  slice(lo: number, hi: number): Entry[] {
    if (lo <= this.offsetIndex) throw new Error(`entry ${lo} is compacted (log starts at ${this.firstIndex})`);
    const end = Math.min(hi, this.lastIndex);
    if (end < lo) return [];
    return this.entries.slice(lo - this.offsetIndex - 1, end - this.offsetIndex);
  }

  /**
   * Entries from lo, at most `maxCount` and — past the first, which always comes — no more than
   * `maxBytes` of payload in all: one append message's worth.
   */
  sliceForAppend(lo: number, maxCount: number, maxBytes: number): Entry[] {
    if (lo <= this.offsetIndex) throw new Error(`entry ${lo} is compacted (log starts at ${this.firstIndex})`);
    const from = lo - this.offsetIndex - 1;
    const limit = Math.min(this.entries.length, from + maxCount);
    let to = from;
    for (let bytes = 0; to < limit; to++) {
      bytes += this.entries[to].data.byteLength;
      if (bytes > maxBytes && to > from) break;
    }
    return this.entries.slice(from, to);
  }

  /** Raft §5.4.1: is a log ending at (lastIndex, lastTerm) at least as up to date as this one? */
  isUpToDate(lastIndex: number, lastTerm: number): boolean {
    const ownTerm = this.lastTerm;
    return lastTerm > ownTerm || (lastTerm === ownTerm && lastIndex >= this.lastIndex);
  }

  append(entries: readonly Entry[]): void {
    for (const entry of entries) {
      if (entry.index !== this.lastIndex + 1) throw new Error(`append at ${entry.index} after ${this.lastIndex}`);
      this.entries.push(entry);
    }
  }

  /**
   * A follower's append after its consistency check passed: entries that already match are
   * kept (the message may be a duplicate), the first conflicting one and everything after it
   * are replaced. Returns the index the log was truncated after, or null when nothing conflicted.
   */
  merge(entries: readonly Entry[]): number | null {
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      if (entry.index <= this.offsetIndex) continue;
      if (this.termAt(entry.index) === entry.term) continue;
      const truncatedAfter = entry.index - 1;
      this.truncateAfter(truncatedAfter);
      this.append(entries.slice(i));
      return truncatedAfter;
    }
    return null;
  }

  private truncateAfter(index: number): void {
    if (index >= this.lastIndex) return;
    this.entries.length = index - this.offsetIndex;
    this.persisted = Math.min(this.persisted, index);
    this.unsentFrom = Math.min(this.unsentFrom, index + 1);
  }

  /** Drops entries at or below `index` (which must be persisted and in this log). */
  compact(index: number): void {
    if (index <= this.offsetIndex) return;
    const term = this.termAt(index);
    if (term === undefined || index > this.persisted) throw new Error(`cannot compact to ${index}`);
    this.entries = this.entries.slice(index - this.offsetIndex);
    this.offsetIndex = index;
    this.offsetTerm = term;
  }

  /** Replaces the whole log by a snapshot's point (the driver drops every stored entry). */
  resetTo(index: number, term: number): void {
    this.entries = [];
    this.offsetIndex = index;
    this.offsetTerm = term;
    this.persisted = Math.min(this.persisted, index);
    this.unsentFrom = index + 1;
  }

  hasUnsent(): boolean {
    return this.unsentFrom <= this.lastIndex;
  }

  /** The entries the driver has not been handed yet; they count as handed from now on. */
  takeUnsent(): Entry[] {
    if (!this.hasUnsent()) return [];
    const entries = this.slice(Math.max(this.unsentFrom, this.firstIndex), this.lastIndex);
    this.unsentFrom = this.lastIndex + 1;
    return entries;
  }

  /**
   * The driver persisted `entries` (one Ready's worth). A suffix truncated since then is not
   * counted: an entry that still has the same term at the same index proves (Log Matching)
   * that everything before it is the same too.
   */
  markPersisted(entries: readonly Entry[]): void {
    for (let i = entries.length - 1; i >= 0; i--) {
      const entry = entries[i];
      if (this.termAt(entry.index) === entry.term) {
        this.persisted = Math.max(this.persisted, entry.index);
        return;
      }
    }
  }

  markSnapshotPersisted(index: number, term: number): void {
    if (this.termAt(index) === term) this.persisted = Math.max(this.persisted, index);
  }
}
