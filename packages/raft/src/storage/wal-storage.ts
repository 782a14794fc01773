// RaftStorage with the log and hard state in a write-ahead log of plain files (wal/segments.ts) and
// snapshots handed to a LevelStorage, which keeps them as files (file-snapshots.ts) and streams them
// — etcd's split of WAL and snapshot files, hashicorp/raft's of LogStore/StableStore and SnapshotStore.
//
// Records (msgpack, one per append): the hard state as of the record, entries from an index (which
// replace every stored entry from that index on, as a follower's overwrite of a conflicting suffix
// does), a compaction point (entries at or below it are gone) or a reset (the whole log is gone: a
// snapshot from the leader replaced it). Replaying the records in order gives the log and hard
// state; the first record of every segment carries the hard state, so removing older segments
// never loses it.
//
// A hard state that only moves the commit index rides with the next record, as in LevelStorage
// (the commit index need not be durable: a restarted server re-learns it from the leader).
//
// Snapshots: the snapshot file is installed first; only once it is durable is the
// compaction point (or reset) written here, and only then are segments that hold nothing but
// compacted entries removed. A crash between the two leaves entries the snapshot covers, which the
// core drops when it restores (restoredEntries), as it drops a log that disagrees with the
// snapshot at its index.
//
// A store whose log is still in LevelDB (written before this file existed) is moved here when it is
// first opened: the log and hard state are written as the first record, synced, then removed from
// LevelDB (again on the next open, if a crash came between).
import { readdirSync } from 'node:fs';
import { Packr } from 'msgpackr';
import type { Entry, HardState, SnapshotMeta } from '../core/types';
import type { PersistedState, PersistedStateMeta, RaftStorage, SnapshotData, SnapshotReader, StorageSnapshotSink } from '../interfaces';
import type { LevelStorage } from './level-storage';
import { FramedRecord, isSegmentName, SegmentFiles, type SegmentInfo } from './wal/segments';
import { recordBody, type StoredEntry, type WalRecord } from './wal/record-body';
import { HardStateDeferral } from './hard-state-deferral';
import { InlineWrites, type InlineWriteLimits } from './wal/inline-writes';
import { syncDirSync } from './durable-dir';

export interface WalStorageOptions {
  /** The folder of the write-ahead log's segments (created if missing). */
  dir: string;
  /** Where snapshots are kept; a log it still holds is moved into the WAL on first load. */
  snapshots: LevelStorage;
  /** Each segment's preallocated size: a segment is closed once the next record would take it past this (default 1 MiB). */
  segmentBytes?: number;
  /** Which records are written on the event loop (default DEFAULT_INLINE_WRITES; wal/inline-writes.ts). */
  inlineWrites?: InlineWriteLimits;
  /**
   * A folder fsynced before a compaction point is written. Snapshot files need none (their folder is
   * synced when one is installed); it was LevelDB's, when snapshots lived there (data format 1). LevelDB
   * syncs its folder only when it writes a MANIFEST, so a log file it made when its memtable filled
   * (holding a snapshot's last pieces and head, each written synced) has a name no power cut has to
   * keep; the compaction point then drops the segments that snapshot replaces. Syncing the folder
   * first makes the snapshot's files durable before the log stops holding what they replace.
   */
  snapshotsDir?: string;
}

// Small enough to make quickly (it is zero-filled and synced before use; every server makes one as
// it starts, and a test suite starts hundreds), large enough that a busy leader rolls about twice a
// second at 64 clients, not every few writes.
const DEFAULT_SEGMENT_BYTES = 1 << 20;
const NO_HARD_STATE: HardState = { term: 0, vote: null, commit: 0 };

export class WalStorage implements RaftStorage {
  /**
   * Whether `dir` holds a write-ahead log's segments. A data dir moved into the WAL keeps no log in
   * LevelDB any more: opened there again, its server would come back with snapshots only, missing
   * entries it acknowledged and the vote it cast. The agent checks this before opening LevelDB's log.
   */
  static holdsLog(dir: string): boolean {
    try {
      return readdirSync(dir).some(isSegmentName);
    } catch {
      return false;
    }
  }

  private readonly packr = new Packr({ useRecords: false });
  private readonly files: SegmentFiles;
  private readonly snapshots: LevelStorage;
  private readonly snapshotsDir: string | undefined;
  private opened = false;
  /** Writes (and loads) are serialised: records reach the file in the order they were asked for. */
  private tail: Promise<void> = Promise.resolve();
  /** The hard state last written (what the first record of a new segment repeats). */
  private hard: HardState = NO_HARD_STATE;
  /** Commit-only hard states wait for the next record (hard-state-deferral.ts). */
  private readonly hardStates = new HardStateDeferral();
  /** Terms of the stored entries from `first` on: a compaction checks the snapshot against them. */
  private first = 1;
  private terms: number[] = [];
  /** The highest entry index each segment holds (by seq): a segment goes once a snapshot covers it. */
  private readonly highest = new Map<number, number>();
  /** What the first open found, until load() hands it out. */
  private openedWith: PersistedStateMeta | null = null;

  constructor(options: WalStorageOptions) {
    this.files = new SegmentFiles(options.dir, options.segmentBytes ?? DEFAULT_SEGMENT_BYTES, new InlineWrites(options.inlineWrites));
    this.snapshots = options.snapshots;
    this.snapshotsDir = options.snapshotsDir;
  }

  load(): Promise<PersistedState> {
    return this.loadState(true) as Promise<PersistedState>;
  }

  /** load() with the snapshot's meta only: readSnapshot() hands its bytes out a piece at a time. */
  loadWithoutSnapshotData(): Promise<PersistedStateMeta> {
    return this.loadState(false);
  }

  private loadState(withData: boolean): Promise<PersistedStateMeta> {
    return this.serialise(async () => {
      // Opening (just now, by serialise) loaded everything once already: hand that over.
      const opened = this.openedWith;
      this.openedWith = null;
      const state = opened ?? { hardState: { ...this.hard }, snapshot: (await this.snapshots.loadWithoutSnapshotData()).snapshot, entries: this.replay() };
      if (!withData || !state.snapshot) return state;
      return { ...state, snapshot: (await this.snapshots.load()).snapshot };
    });
  }

  append(hardState: HardState | undefined, entries: Entry[]): Promise<void> {
    const plan = this.hardStates.plan(hardState, entries.length, this.hard);
    if (!plan) return this.tail;
    const hard = plan.hard;
    return this.serialise(async () => {
      const record: WalRecord = {};
      if (hard) record.h = hard;
      if (entries.length > 0) {
        record.f = entries[0].index;
        const stored: StoredEntry[] = new Array(entries.length);
        for (let i = 0; i < entries.length; i++) stored[i] = [entries[i].term, entries[i].type, entries[i].data];
        record.e = stored;
      }
      try {
        await this.write(record);
      } catch (err) {
        plan.failed();
        throw err;
      }
      if (entries.length > 0) this.noteEntries(entries[0].index, entries.map((e) => e.term));
    });
  }

  async saveSnapshot(meta: SnapshotMeta, data: SnapshotData, compactTo: number): Promise<void> {
    await this.snapshots.saveSnapshot(meta, data, compactTo);
    const removed = await this.serialise(() => this.compact(meta, compactTo));
    await removed();
  }

  createSnapshot(meta: SnapshotMeta, compactTo: number): StorageSnapshotSink {
    const inner = this.snapshots.createSnapshot(meta, compactTo);
    // A commit that failed after the file was installed (the compaction point could not be written)
    // is retried from the compaction (RaftNode retries an installed snapshot's commit until it succeeds).
    let installed = false;
    return {
      get size() {
        return inner.size;
      },
      write: (chunk) => inner.write(chunk),
      abort: () => inner.abort(),
      commit: async () => {
        if (!installed) await inner.commit();
        installed = true;
        const removed = await this.serialise(() => this.compact(meta, compactTo));
        await removed();
      },
    };
  }

  readSnapshot(): Promise<SnapshotReader | undefined> {
    return this.snapshots.readSnapshot();
  }

  async close(): Promise<void> {
    const hard = this.hardStates.take();
    if (hard && this.opened) await this.serialise(() => this.write({ h: hard })).catch(() => undefined);
    await this.tail.catch(() => undefined);
    await this.files.close();
    await this.snapshots.close();
  }

  /** First load: the segments replayed, or a log still in LevelDB moved into a first one. */
  private async open(inner: PersistedStateMeta): Promise<Entry[]> {
    const entries = this.replay();
    const leftInLevel = inner.entries.length > 0 || inner.hardState.term > 0 || inner.hardState.commit > 0;
    if (this.files.list().length === 0 && leftInLevel) {
      const record: WalRecord = { h: inner.hardState };
      if (inner.entries.length > 0) {
        record.f = inner.entries[0].index;
        record.e = inner.entries.map((e) => [e.term, e.type, e.data]);
      }
      await this.write(record);
      this.opened = true;
      await this.snapshots.dropLog();
      return this.replay();
    }
    this.opened = true;
    // Moved already; a crash came before LevelDB's copy was removed.
    if (leftInLevel) await this.snapshots.dropLog();
    return entries;
  }

  /** Reads every record from the segments: the hard state, the log, each segment's highest index. */
  private replay(): Entry[] {
    let entries: Entry[] = [];
    let hard = NO_HARD_STATE;
    this.highest.clear();
    this.files.replay((body, seq) => {
      const r = this.packr.unpack(body) as WalRecord;
      if (r.h) hard = r.h;
      if (r.r) entries = [];
      if (r.c !== undefined) {
        const drop = entries.findIndex((e) => e.index > r.c!);
        entries = drop < 0 ? [] : entries.slice(drop);
      }
      if (r.e && r.e.length > 0) {
        const f = r.f!;
        const from = entries.length > 0 ? entries[0].index : f;
        // From inside the log (or just past it): a suffix replaced. Anywhere else (a gap after a
        // reset, below the log): the log starts again there.
        if (f >= from && f <= from + entries.length) entries.length = f - from;
        else entries = [];
        for (let i = 0; i < r.e.length; i++) {
          const [term, type, data] = r.e[i];
          entries.push({ index: f + i, term, type, data });
        }
        this.highest.set(seq, Math.max(this.highest.get(seq) ?? 0, f + r.e.length - 1));
      }
    });
    this.hard = hard;
    this.first = entries.length > 0 ? entries[0].index : 1;
    this.terms = entries.map((e) => e.term);
    return entries;
  }

  /** After a snapshot's head is durable: its compaction point (or a reset) recorded, covered segments removed. */
  /**
   * Writes the compaction point and drops the segments it covers from the log. Returns a wait for
   * their files to be unlinked, for the caller to await after the write chain (serialise) has moved
   * on: appends need not wait for the unlinks (~1 ms a segment, segments.ts remove()).
   */
  private async compact(meta: SnapshotMeta, compactTo: number): Promise<() => Promise<void>> {
    // Raft §7 (as LevelStorage): a log that lacks the snapshot's last entry or disagrees with it
    // there is discarded whole, as is every log when compactTo is Infinity (an installed snapshot).
    const at = meta.index - this.first;
    const agrees = at >= 0 && at < this.terms.length && this.terms[at] === meta.term;
    const whole = compactTo === Infinity || !agrees;
    if (this.snapshotsDir) syncDirSync(this.snapshotsDir);
    await this.write(whole ? { r: true } : { c: compactTo });
    if (whole) {
      this.first = meta.index + 1;
      this.terms = [];
    } else if (compactTo >= this.first) {
      this.terms = this.terms.slice(compactTo + 1 - this.first);
      this.first = compactTo + 1;
    }
    const covered = whole ? Infinity : compactTo;
    const segments = this.files.list();
    // Only a run of the oldest: a reset or overwrite in a removed segment must not leave entries
    // it discarded, in an older segment still kept, to come back on the next replay.
    const gone: SegmentInfo[] = [];
    for (const s of segments.slice(0, -1)) {
      if ((this.highest.get(s.seq) ?? 0) > covered) break;
      gone.push(s);
    }
    const removal = this.files.remove(gone);
    // Seen by the caller; until then a failure must not be unhandled.
    removal.catch(() => undefined);
    for (const s of gone) this.highest.delete(s.seq);
    return () => removal;
  }

  /** Writes one record; the first in a new segment also carries the hard state. */
  private async write(record: WalRecord): Promise<void> {
    this.openedWith = null; // what the open found is no longer all there is
    let framed = new FramedRecord(recordBody(this.packr, record));
    if (!record.h && this.files.wouldRoll(framed.length)) framed = new FramedRecord(recordBody(this.packr, { ...record, h: this.hard }));
    await this.files.append(framed);
    if (record.h) this.hard = record.h;
    const seq = this.files.list()[this.files.list().length - 1].seq;
    if (record.e && record.e.length > 0) this.highest.set(seq, Math.max(this.highest.get(seq) ?? 0, record.f! + record.e.length - 1));
  }

  /** The terms of entries written from `from` on, replacing what was stored from there. */
  private noteEntries(from: number, terms: number[]): void {
    if (this.terms.length === 0 || from < this.first || from > this.first + this.terms.length) {
      this.first = from;
      this.terms = terms;
      return;
    }
    this.terms.length = from - this.first;
    for (const t of terms) this.terms.push(t);
  }

  /** Runs `work` after every earlier write; a store written before it was loaded is opened first. */
  private serialise<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(async () => {
      if (!this.opened) {
        // Without the snapshot's bytes: a restart reads them a piece at a time (readSnapshot), if at all.
        const inner = await this.snapshots.loadWithoutSnapshotData();
        this.openedWith = { hardState: NO_HARD_STATE, snapshot: inner.snapshot, entries: await this.open(inner) };
        this.openedWith.hardState = { ...this.hard };
      }
      return work();
    });
    this.tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
}
