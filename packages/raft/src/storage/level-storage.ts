// The Raft log, hard state and latest snapshot in LevelDB. Every write is one atomic batch,
// so a crash leaves either all or none of it, and every batch is synced (LevelDB's default is
// unsynced: an acknowledged entry or a granted vote could otherwise vanish).
//
// A hard state that only moves the commit index is not written on its own: it waits for the
// next batch (or close). The commit index need not be durable (etcd syncs only for entries,
// term or vote — its MustSync): after a crash a server re-learns it from the leader. Writing it
// separately cost one more fsync per commit on every server, and the driver applies only after
// the write, so it sat on every write's critical path.
//
// Entries are stored one LevelDB value per appended batch (a "block"), keyed by the block's
// first and last index, not one value per entry: LevelDB's JS batch path costs tens of
// microseconds per operation, which at thousands of entries per second was the largest single
// cost of the log. A follower overwriting a conflicting suffix rewrites the one block it
// cuts into; compaction drops whole blocks and rewrites the one it cuts into.
//
// A failed write (a full disk, no file descriptors left, an I/O error) leaves LevelDB unusable
// until it is reopened: after a failed write-ahead-log append it keeps accepting writes into a log
// file whose tail is torn, and a later synced, acknowledged batch can then vanish when the log is
// replayed (seen on a full tmpfs: the batch written right after the disk was freed was gone after
// a reopen); after a failed sync or background compaction it refuses every write. So after any
// failed write, the next write first closes and reopens the database (the whole database given,
// for a sublevel) and re-reads the block list, which a failed batch may or may not have reached.
// Callers retry the failed write itself (RaftNode does, until it succeeds): every write here is
// idempotent.
import { Level } from 'level';
import { Packr } from 'msgpackr';
import type { Entry, EntryType, HardState, SnapshotMeta } from '../core/types';
import type { PersistedState, RaftStorage } from '../interfaces';

type Db = Level<string, Uint8Array>;
/** Either a directory of our own, or a section (sublevel) of a database someone else opened. */
export type LevelStorageOptions = { path: string } | { db: Level<any, any>; prefix: string };

const BLOCK = 'blk!';
const BLOCK_END = 'blk~';
/** Entries of the older one-value-per-entry layout; moved into blocks when the store opens. */
const LEGACY_LOG = 'log!';
const LEGACY_LOG_END = 'log~';
const HARD_STATE = 'hardstate';
const SNAPSHOT_META = 'snapshot-meta';
const SNAPSHOT_DATA = 'snapshot-data';
const HEX = 14;

/** Fixed-width hex so lexicographic key order is index order; the last index rides along. */
function blockKey(first: number, last: number): string {
  return BLOCK + first.toString(16).padStart(HEX, '0') + last.toString(16).padStart(HEX, '0');
}

function parseBlockKey(key: string): Block {
  const at = BLOCK.length;
  return { first: parseInt(key.slice(at, at + HEX), 16), last: parseInt(key.slice(at + HEX, at + 2 * HEX), 16) };
}

interface Block {
  first: number;
  last: number;
}

/** One entry as stored inside a block: its index is the block's first index plus its position. */
type StoredEntry = [term: number, type: EntryType, data: Uint8Array];

type Op = { type: 'put'; key: string; value: Uint8Array } | { type: 'del'; key: string };

export class LevelStorage implements RaftStorage {
  private readonly packr = new Packr({ useRecords: false });
  private readonly db: Db;
  private readonly owned: Level<any, any> | null;
  /** The database LevelDB actually opens: ours, or the root of the one we were given a section of. */
  private readonly root: Level<any, any>;
  /** A write failed: reopen the database before the next one. */
  private mustReopen = false;
  /** The stored blocks in index order, so truncation and compaction need no scan of the disk. */
  private blocks: Block[] = [];
  private opened: Promise<void> | null = null;
  /** Writes are serialised so the tracked blocks always match the disk. */
  private tail: Promise<void> = Promise.resolve();
  /** Term and vote of the last hard state written, to tell a commit-only change. */
  private lastTerm = 0;
  private lastVote: string | null = null;
  /** A commit-only hard state not written yet; it rides with the next batch. */
  private deferredHard: HardState | undefined;

  constructor(options: LevelStorageOptions) {
    if ('path' in options) {
      this.owned = new Level(options.path, { keyEncoding: 'utf8', valueEncoding: 'view' });
      this.db = this.owned as Db;
      this.root = this.owned;
    } else {
      this.owned = null;
      this.root = ((options.db as { db?: Level<any, any> }).db ?? options.db) as Level<any, any>;
      this.db = options.db.sublevel<string, Uint8Array>(options.prefix, {
        keyEncoding: 'utf8',
        valueEncoding: 'view',
      }) as unknown as Db;
    }
  }

  async load(): Promise<PersistedState> {
    await this.open();
    const [hard, meta, data] = await this.db.getMany([HARD_STATE, SNAPSHOT_META, SNAPSHOT_DATA]);
    const entries: Entry[] = [];
    for await (const [key, value] of this.db.iterator({ gt: BLOCK, lt: BLOCK_END })) {
      entries.push(...this.decodeBlock(parseBlockKey(key).first, value));
    }
    const hardState: HardState = hard ? (this.packr.unpack(hard) as HardState) : { term: 0, vote: null, commit: 0 };
    this.lastTerm = hardState.term;
    this.lastVote = hardState.vote;
    return {
      hardState,
      snapshot: meta && data ? { meta: this.packr.unpack(meta) as SnapshotMeta, data } : undefined,
      entries,
    };
  }

  append(hardState: HardState | undefined, entries: Entry[]): Promise<void> {
    // Compared with what is written (not merely handed to us): a term or vote whose write failed
    // must never be mistaken for a commit-only change and deferred on the retry.
    const termOrVote = hardState !== undefined && (hardState.term !== this.lastTerm || hardState.vote !== this.lastVote);
    if (entries.length === 0 && !termOrVote) {
      if (hardState) this.deferredHard = hardState;
      return this.tail;
    }
    // Hard states reach us in order: a newer one supersedes the deferred one.
    const hard = hardState ?? this.deferredHard;
    const deferred = hardState === undefined ? hard : undefined;
    this.deferredHard = undefined;
    return this.serialise(async () => {
      const ops: Op[] = [];
      if (hard) ops.push({ type: 'put', key: HARD_STATE, value: this.packr.pack(hard) });
      let blocks = this.blocks;
      if (entries.length > 0) {
        const first = entries[0].index;
        const last = entries[entries.length - 1].index;
        // The new entries replace everything stored from `first` on.
        blocks = await this.truncateFrom(first, ops);
        ops.push({ type: 'put', key: blockKey(first, last), value: this.encodeBlock(entries) });
        blocks.push({ first, last });
      }
      try {
        await this.db.batch(ops, { sync: true });
      } catch (err) {
        // A commit-only hard state that rode along waits for the next batch again.
        if (deferred && !this.deferredHard) this.deferredHard = deferred;
        throw err;
      }
      this.blocks = blocks;
      if (hard) {
        this.lastTerm = hard.term;
        this.lastVote = hard.vote;
      }
    });
  }

  saveSnapshot(meta: SnapshotMeta, data: Uint8Array, compactTo: number): Promise<void> {
    return this.serialise(async () => {
      const ops: Op[] = [
        { type: 'put', key: SNAPSHOT_META, value: this.packr.pack(meta) },
        { type: 'put', key: SNAPSHOT_DATA, value: data },
      ];
      let keepFrom = compactTo + 1;
      const at = this.blocks.find((b) => b.first <= meta.index && meta.index <= b.last);
      if (at) {
        const stored = await this.db.get(blockKey(at.first, at.last));
        const entry = stored ? this.decodeBlock(at.first, stored)[meta.index - at.first] : undefined;
        // Raft §7: a log that disagrees with the snapshot at its last index is discarded whole.
        if (!entry || entry.term !== meta.term) keepFrom = Infinity;
      } else {
        keepFrom = Infinity;
      }
      // Whole blocks below `keepFrom` go; one straddling it is rewritten without its head.
      const kept: Block[] = [];
      for (const b of this.blocks) {
        if (b.last < keepFrom) {
          ops.push({ type: 'del', key: blockKey(b.first, b.last) });
        } else if (b.first < keepFrom) {
          const stored = await this.db.get(blockKey(b.first, b.last));
          if (!stored) throw new Error(`raft log block ${b.first}-${b.last} is missing`);
          const rest = this.decodeBlock(b.first, stored).slice(keepFrom - b.first);
          ops.push({ type: 'del', key: blockKey(b.first, b.last) });
          ops.push({ type: 'put', key: blockKey(keepFrom, b.last), value: this.encodeBlock(rest) });
          kept.push({ first: keepFrom, last: b.last });
        } else {
          kept.push(b);
        }
      }
      await this.db.batch(ops, { sync: true });
      this.blocks = kept;
    });
  }

  async close(): Promise<void> {
    const hard = this.deferredHard;
    this.deferredHard = undefined;
    if (hard) await this.serialise(() => this.db.batch([{ type: 'put', key: HARD_STATE, value: this.packr.pack(hard) }], { sync: true })).catch(() => undefined);
    await this.tail.catch(() => undefined);
    if (this.owned) await this.owned.close();
  }

  /**
   * Deletes (into `ops`) every block from index `from` on, rewriting a block that holds entries
   * on both sides of it; returns the blocks that remain.
   */
  private async truncateFrom(from: number, ops: Op[]): Promise<Block[]> {
    const kept = this.blocks.slice();
    while (kept.length > 0 && kept[kept.length - 1].last >= from) {
      const b = kept.pop()!;
      ops.push({ type: 'del', key: blockKey(b.first, b.last) });
      if (b.first < from) {
        const stored = await this.db.get(blockKey(b.first, b.last));
        if (!stored) throw new Error(`raft log block ${b.first}-${b.last} is missing`);
        const head = this.decodeBlock(b.first, stored).slice(0, from - b.first);
        ops.push({ type: 'put', key: blockKey(b.first, from - 1), value: this.encodeBlock(head) });
        kept.push({ first: b.first, last: from - 1 });
        break;
      }
    }
    return kept;
  }

  private open(): Promise<void> {
    if (!this.opened) {
      this.opened = (async () => {
        await this.db.open();
        await this.migrateLegacyLog();
        for await (const key of this.db.keys({ gt: BLOCK, lt: BLOCK_END })) this.blocks.push(parseBlockKey(key));
      })();
    }
    return this.opened;
  }

  /** A store written by the one-value-per-entry layout: its entries become one block. */
  private async migrateLegacyLog(): Promise<void> {
    const entries: Entry[] = [];
    const ops: Op[] = [];
    for await (const [key, value] of this.db.iterator({ gt: LEGACY_LOG, lt: LEGACY_LOG_END })) {
      const [term, type, data] = this.packr.unpack(value) as StoredEntry;
      entries.push({ term, type, data, index: parseInt(key.slice(LEGACY_LOG.length), 16) });
      ops.push({ type: 'del', key });
    }
    if (entries.length === 0) return;
    ops.push({ type: 'put', key: blockKey(entries[0].index, entries[entries.length - 1].index), value: this.encodeBlock(entries) });
    await this.db.batch(ops, { sync: true });
  }

  private serialise(write: () => Promise<void>): Promise<void> {
    const run = this.tail.then(async () => {
      // Reopening is part of the write: if it fails (the disk is still full), so does the write,
      // and the next one tries again.
      if (this.mustReopen) await this.reopen();
      await this.open();
      try {
        await write();
      } catch (err) {
        this.mustReopen = true;
        throw err;
      }
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Closes and reopens the database (see the top of this file), then re-reads the block list. */
  private async reopen(): Promise<void> {
    await this.open().catch(() => undefined); // never opened: nothing to tear down first
    if (this.root.status === 'open') await this.root.close();
    await this.root.open();
    if (this.db !== this.root) await this.db.open();
    const blocks: Block[] = [];
    for await (const key of this.db.keys({ gt: BLOCK, lt: BLOCK_END })) blocks.push(parseBlockKey(key));
    this.blocks = blocks;
    this.mustReopen = false;
  }

  private encodeBlock(entries: readonly Entry[]): Uint8Array {
    const stored: StoredEntry[] = new Array(entries.length);
    for (let i = 0; i < entries.length; i++) stored[i] = [entries[i].term, entries[i].type, entries[i].data];
    return this.packr.pack(stored);
  }

  private decodeBlock(first: number, value: Uint8Array): Entry[] {
    const stored = this.packr.unpack(value) as StoredEntry[];
    return stored.map(([term, type, data], i) => ({ term, type, data, index: first + i }));
  }
}
