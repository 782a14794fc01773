// The LevelStorage of data format 1 (commit aa46f1b), kept whole as the tests' writer of an older
// data dir: snapshots as pieces in LevelDB under a head. Tests write a store with it and check that
// today's LevelStorage and WalStorage move its snapshot out into a file (issue #34). Not used by any
// server; do not change it except to keep it compiling.
// The Raft log, hard state and latest snapshot in LevelDB. Every write is one atomic batch,
// so a crash leaves either all or none of it, and every batch is synced (LevelDB's default is
// unsynced: an acknowledged entry or a granted vote could otherwise vanish).
//
// A hard state that only moves the commit index is not written on its own: it waits for the
// next batch (or close; hard-state-deferral.ts). The commit index need not be durable (etcd syncs only for entries,
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
// Compaction after a snapshot does not delete the dropped blocks in the snapshot's batch: a log
// written one entry at a time holds tens of thousands of blocks, and a batch of that many deletes
// cost 120–155 ms of the event loop in abstract-level's per-operation checks (every server, at every
// log-bound snapshot; docs/benchmarks/history.md). The head instead records the log's floor — the first
// index kept — and the blocks below it are dead from that moment: left out when the log is read and
// removed afterwards by a range delete that LevelDB runs off the main thread (again on the next
// open, if a crash came first). A block straddling the floor is still rewritten in the batch, so
// every block below the floor is wholly dead.
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
//
// Snapshots are stored in pieces (hashicorp/raft's SnapshotSink): each piece is one synced value
// under a key of the snapshot's generation, written as it comes, and the snapshot exists only once
// its head record (meta, generation, piece count) is written — last, in one batch that also drops
// the previous snapshot's pieces and compacts the log. A crash between pieces leaves the previous
// snapshot as it was; the orphaned pieces are removed when the store next opens. No write holds the
// whole snapshot: at 100,000 catalog nodes it is ~70 MB, and one buffer that size starts a major GC
// in V8 (docs/benchmarks/history.md, "Snapshots"). A store written when the snapshot was one value
// (`snapshot-meta` + `snapshot-data`) still loads; the next snapshot replaces it.
import { Level } from 'level';
import { Packr } from 'msgpackr';
import type { Entry, EntryType, HardState, PersistedState, PersistedStateMeta, RaftStorage, SnapshotData, SnapshotMeta, SnapshotReader, StorageSnapshotSink } from '@registry/raft';
import { joinSnapshot, snapshotPieces } from '@registry/raft';
import { HardStateDeferral } from '../../src/storage/hard-state-deferral';

type Db = Level<string, Uint8Array>;
/** Either a directory of our own, or a section (sublevel) of a database someone else opened. */
type LevelStorageOptions = { path: string } | { db: Level<any, any>; prefix: string };

const BLOCK = 'blk!';
const BLOCK_END = 'blk~';
/** Entries of the older one-value-per-entry layout; moved into blocks when the store opens. */
const LEGACY_LOG = 'log!';
const LEGACY_LOG_END = 'log~';
const HARD_STATE = 'hardstate';
/** The one-value snapshot layout: still loaded, replaced by the next snapshot. */
const SNAPSHOT_META = 'snapshot-meta';
const SNAPSHOT_DATA = 'snapshot-data';
/** The snapshot's head (SnapshotHead), written last; its pieces are under PIECE keys of its generation. */
const SNAPSHOT_HEAD = 'snapshot-head';
const PIECE = 'snc!';
const PIECE_END = 'snc~';
const HEX = 14;

/** Fixed-width hex so lexicographic key order is index order; the last index rides along. */
function blockKey(first: number, last: number): string {
  return BLOCK + first.toString(16).padStart(HEX, '0') + last.toString(16).padStart(HEX, '0');
}

function parseBlockKey(key: string): Block {
  const at = BLOCK.length;
  return { first: parseInt(key.slice(at, at + HEX), 16), last: parseInt(key.slice(at + HEX, at + 2 * HEX), 16) };
}

/** Generation and piece number, fixed-width hex: a generation's pieces are contiguous, in order. */
function pieceKey(gen: number, i: number): string {
  return PIECE + gen.toString(16).padStart(8, '0') + i.toString(16).padStart(8, '0');
}

function pieceGen(key: string): number {
  return parseInt(key.slice(PIECE.length, PIECE.length + 8), 16);
}

interface SnapshotHead {
  meta: SnapshotMeta;
  gen: number;
  chunks: number;
  size: number;
  /** The first log index kept when this snapshot was committed: blocks starting below it are dead. Absent in heads written before the floor (their dead blocks were deleted in the batch). */
  floor?: number;
}

interface Block {
  first: number;
  last: number;
}

/** One entry as stored inside a block: its index is the block's first index plus its position. */
type StoredEntry = [term: number, type: EntryType, data: Uint8Array];

type Op = { type: 'put'; key: string; value: Uint8Array } | { type: 'del'; key: string };

export class Format1LevelStorage implements RaftStorage {
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
  /** Commit-only hard states wait for the next batch (hard-state-deferral.ts). */
  private readonly hardStates = new HardStateDeferral();
  /** The stored snapshot's head (null: none, or the one-value layout). */
  private head: SnapshotHead | null = null;
  /** Generation of the next snapshot written (above every generation on disk). */
  private nextGen = 1;
  /**
   * Pieces of snapshots that failed or were abandoned while LevelDB could not be written (a full
   * disk): deleted with the next snapshot's commit, so retries do not pile up copies on the disk.
   * `pieces` counts one past the last written piece (a failed write may have landed).
   */
  private orphaned: { gen: number; pieces: number }[] = [];

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
    const state = await this.loadState(true);
    return state as PersistedState;
  }

  /** load() leaving the snapshot's bytes in LevelDB: readSnapshot() hands them out a piece at a time. */
  loadWithoutSnapshotData(): Promise<PersistedStateMeta> {
    return this.loadState(false);
  }

  private async loadState(withData: boolean): Promise<PersistedStateMeta> {
    await this.open();
    const [hard, meta] = await this.db.getMany([HARD_STATE, SNAPSHOT_META]);
    const snapshot = !withData
      ? this.head
        ? { meta: this.head.meta }
        : meta
          ? { meta: this.packr.unpack(meta) as SnapshotMeta }
          : undefined
      : this.head
        ? await this.loadPieces(this.head)
        : meta
          ? await this.loadLegacySnapshot(meta)
          : undefined;
    const entries: Entry[] = [];
    for await (const [key, value] of this.db.iterator({ gt: this.liveBlocksFrom(), lt: BLOCK_END })) {
      entries.push(...this.decodeBlock(parseBlockKey(key).first, value));
    }
    const hardState: HardState = hard ? (this.packr.unpack(hard) as HardState) : { term: 0, vote: null, commit: 0 };
    this.lastTerm = hardState.term;
    this.lastVote = hardState.vote;
    return {
      hardState,
      snapshot,
      entries,
    };
  }

  append(hardState: HardState | undefined, entries: Entry[]): Promise<void> {
    const plan = this.hardStates.plan(hardState, entries.length, { term: this.lastTerm, vote: this.lastVote });
    if (!plan) return this.tail;
    const hard = plan.hard;
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
        plan.failed();
        throw err;
      }
      this.blocks = blocks;
      if (hard) {
        this.lastTerm = hard.term;
        this.lastVote = hard.vote;
      }
    });
  }

  async saveSnapshot(meta: SnapshotMeta, data: SnapshotData, compactTo: number): Promise<void> {
    const sink = this.createSnapshot(meta, compactTo);
    try {
      for (const piece of snapshotPieces(data)) await sink.write(piece);
      await sink.commit();
    } catch (err) {
      await sink.abort();
      throw err;
    }
  }

  /**
   * Pieces are written as they come, each synced (a later synced batch does not make an earlier
   * unsynced one in a rotated-out log file durable), beside the serialised log writes: LevelDB
   * orders concurrent writes itself, and no piece key is one the log writes touch.
   */
  createSnapshot(meta: SnapshotMeta, compactTo: number): StorageSnapshotSink {
    // Taken once the store is open (it learns the generations on disk when it opens).
    let gen = -1;
    let chunks = 0;
    let size = 0;
    let state: 'open' | 'committed' | 'aborted' = 'open';
    const storage = this;
    return {
      get size() {
        return size;
      },
      async write(chunk: Uint8Array): Promise<void> {
        if (state !== 'open') throw new Error(`snapshot sink is already ${state}`);
        await storage.open();
        // A failed write left LevelDB to be reopened first: the serialised path does it (and fails,
        // as this write then does, while the disk is still full).
        if (storage.mustReopen) await storage.serialise(async () => undefined);
        if (gen < 0) gen = storage.nextGen++;
        try {
          await storage.db.put(pieceKey(gen, chunks), chunk, { sync: true });
        } catch (err) {
          storage.mustReopen = true;
          state = 'aborted';
          storage.orphaned.push({ gen, pieces: chunks + 1 });
          throw err;
        }
        chunks++;
        size += chunk.length;
      },
      commit(): Promise<void> {
        if (state !== 'open') return Promise.reject(new Error(`snapshot sink is already ${state}`));
        state = 'committed';
        return storage
          .serialise(() => {
            if (gen < 0) gen = storage.nextGen++; // no pieces: an empty snapshot
            return storage.commitSnapshot({ meta, gen, chunks, size }, compactTo);
          })
          .catch((err: unknown) => {
            // Deleted later unless the failed batch did land (commitSnapshot checks the head).
            storage.orphaned.push({ gen, pieces: chunks });
            throw err;
          });
      },
      async abort(): Promise<void> {
        if (state !== 'open') return;
        state = 'aborted';
        // Best effort: pieces left behind (a failed delete, a crash) are removed at the next open.
        if (gen < 0) return;
        const ops: Op[] = [];
        for (let i = 0; i < chunks; i++) ops.push({ type: 'del', key: pieceKey(gen, i) });
        const deleted = !storage.mustReopen && (await storage.db.batch(ops).then(() => true, () => false));
        if (!deleted) storage.orphaned.push({ gen, pieces: chunks });
      },
    };
  }

  async readSnapshot(): Promise<SnapshotReader | undefined> {
    await this.open();
    const head = this.head;
    if (!head) {
      const meta = await this.db.get(SNAPSHOT_META);
      if (!meta) return undefined;
      const data = await this.db.get(SNAPSHOT_DATA);
      if (!data) throw new Error('raft snapshot data is missing');
      return { meta: this.packr.unpack(meta) as SnapshotMeta, size: data.length, chunks: 1, read: async () => data, close: () => undefined };
    }
    return {
      meta: head.meta,
      size: head.size,
      chunks: head.chunks,
      read: async (i: number) => {
        const piece = i >= 0 && i < head.chunks ? await this.db.get(pieceKey(head.gen, i)) : undefined;
        if (!piece) throw new Error(`raft snapshot piece ${i} of generation ${head.gen} is gone (replaced by a newer snapshot?)`);
        return piece;
      },
      close: () => undefined,
    };
  }

  /** The head goes in last, with the old snapshot's removal and the log's new floor: one batch. */
  private async commitSnapshot(head: SnapshotHead, compactTo: number): Promise<void> {
    const { meta } = head;
    const ops: Op[] = [
      { type: 'del', key: SNAPSHOT_META },
      { type: 'del', key: SNAPSHOT_DATA },
    ];
    const previous = this.head;
    if (previous) for (let i = 0; i < previous.chunks; i++) ops.push({ type: 'del', key: pieceKey(previous.gen, i) });
    // Never the pieces of the stored snapshot (a "failed" commit may have landed) or of this one.
    const orphans = this.orphaned.filter((o) => o.gen !== previous?.gen && o.gen !== head.gen);
    for (const o of orphans) for (let i = 0; i < o.pieces; i++) ops.push({ type: 'del', key: pieceKey(o.gen, i) });
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
    // Whole blocks below `keepFrom` die with the head's floor (removed after the batch, off the
    // main thread); one straddling it is rewritten without its head. A log discarded whole is
    // deleted in the batch — it can hold blocks above the snapshot, which a floor would not cover —
    // and the floor moves to just above the snapshot, where the next entry goes.
    const whole = keepFrom === Infinity;
    // A floor never moves down over blocks already dead; only a log discarded whole may set it
    // lower (an older snapshot installed: Raft does not, but then the dead ones are removed first).
    if (whole && (this.head?.floor ?? 0) > meta.index + 1) await this.db.clear({ gt: BLOCK, lt: this.liveBlocksFrom() });
    const floor = whole ? meta.index + 1 : Math.max(keepFrom, this.head?.floor ?? 0);
    const kept: Block[] = [];
    for (const b of this.blocks) {
      if (b.last < keepFrom) {
        if (whole) ops.push({ type: 'del', key: blockKey(b.first, b.last) });
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
    const stored: SnapshotHead = { ...head, floor };
    ops.unshift({ type: 'put', key: SNAPSHOT_HEAD, value: this.packr.pack(stored) });
    await this.db.batch(ops, { sync: true });
    this.blocks = kept;
    this.head = stored;
    this.orphaned = this.orphaned.filter((o) => !orphans.includes(o) && o.gen !== head.gen);
    this.clearDeadBlocks();
  }

  /** The lowest key of a live block: every block starting below the stored head's floor is dead. */
  private liveBlocksFrom(): string {
    const floor = this.head?.floor;
    return floor ? blockKey(floor, 0) : BLOCK;
  }

  /**
   * Removes the dead blocks below the floor with one range delete, which LevelDB runs off the main
   * thread. Unsynced and unawaited: they are ignored wherever the log is read, and a delete lost to
   * a crash is made again when the store next opens.
   */
  private clearDeadBlocks(): void {
    if (!this.head?.floor) return;
    this.db.clear({ gt: BLOCK, lt: this.liveBlocksFrom() }).catch(() => undefined);
  }

  private async loadPieces(head: SnapshotHead): Promise<{ meta: SnapshotMeta; data: Uint8Array }> {
    const keys: string[] = [];
    for (let i = 0; i < head.chunks; i++) keys.push(pieceKey(head.gen, i));
    const pieces = keys.length > 0 ? await this.db.getMany(keys) : [];
    const missing = pieces.findIndex((p) => p === undefined);
    if (missing >= 0) throw new Error(`raft snapshot piece ${missing} of generation ${head.gen} is missing`);
    const data = joinSnapshot(pieces as Uint8Array[]);
    if (data.length !== head.size) throw new Error(`raft snapshot has ${data.length} bytes, its head says ${head.size}`);
    return { meta: head.meta, data };
  }

  private async loadLegacySnapshot(meta: Uint8Array): Promise<{ meta: SnapshotMeta; data: Uint8Array } | undefined> {
    const data = await this.db.get(SNAPSHOT_DATA);
    return data ? { meta: this.packr.unpack(meta) as SnapshotMeta, data } : undefined;
  }

  /**
   * Removes the log and the hard state, keeping the snapshot: WalStorage has moved them into its
   * write-ahead log and keeps only snapshots here. One synced batch; running it again is harmless.
   */
  dropLog(): Promise<void> {
    this.hardStates.take();
    return this.serialise(async () => {
      const ops: Op[] = this.blocks.map((b) => ({ type: 'del', key: blockKey(b.first, b.last) }));
      ops.push({ type: 'del', key: HARD_STATE });
      await this.db.batch(ops, { sync: true });
      this.blocks = [];
      this.lastTerm = 0;
      this.lastVote = null;
      this.clearDeadBlocks();
    });
  }

  async close(): Promise<void> {
    const hard = this.hardStates.take();
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
        await this.readSnapshotHead();
        for await (const key of this.db.keys({ gt: this.liveBlocksFrom(), lt: BLOCK_END })) this.blocks.push(parseBlockKey(key));
        this.clearDeadBlocks();
      })();
    }
    return this.opened;
  }

  /** Learns the stored snapshot's head and removes pieces of snapshots never committed (a crash). */
  private async readSnapshotHead(): Promise<void> {
    const head = await this.db.get(SNAPSHOT_HEAD);
    this.head = head ? (this.packr.unpack(head) as SnapshotHead) : null;
    let maxGen = this.head?.gen ?? 0;
    const orphans: Op[] = [];
    for await (const key of this.db.keys({ gt: PIECE, lt: PIECE_END })) {
      const gen = pieceGen(key);
      maxGen = Math.max(maxGen, gen);
      if (gen !== this.head?.gen) orphans.push({ type: 'del', key });
    }
    this.nextGen = maxGen + 1;
    if (orphans.length > 0) await this.db.batch(orphans, { sync: true });
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
    // A failed commit may or may not have reached the disk: the head on disk is the truth.
    const head = await this.db.get(SNAPSHOT_HEAD);
    this.head = head ? (this.packr.unpack(head) as SnapshotHead) : null;
    const blocks: Block[] = [];
    for await (const key of this.db.keys({ gt: this.liveBlocksFrom(), lt: BLOCK_END })) blocks.push(parseBlockKey(key));
    this.blocks = blocks;
    this.mustReopen = false;
    this.clearDeadBlocks();
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
