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
// Snapshots are files (file-snapshots.ts), not LevelDB values (issue #34): LevelDB holds the log and
// hard state only, and the log's floor (the first index kept) under its own key. A snapshot is
// written into its file as it comes, installed (renamed, folder synced), and only then is the log
// compacted here, in one synced batch; a crash between the two leaves log entries the snapshot
// covers, which the core drops when it restores (as it drops a log that disagrees with the
// snapshot at its index). A store written when snapshots lived here — as pieces under a head, or as
// one value (`snapshot-meta` + `snapshot-data`) — is moved out into a file when it is opened: the
// file is installed first, then the LevelDB copy is deleted (again on the next open, if a crash
// came between).
import { join } from 'node:path';
import { Level } from 'level';
import { Packr } from 'msgpackr';
import type { Entry, EntryType, HardState, SnapshotMeta } from '../core/types';
import type { PersistedState, PersistedStateMeta, RaftStorage, SnapshotData, SnapshotReader, StorageSnapshotSink } from '../interfaces';
import { snapshotPieces } from './snapshot-chunks';
import { HardStateDeferral } from './hard-state-deferral';
import { FileSnapshots, type SnapshotFileWriter } from './file-snapshots';

type Db = Level<string, Uint8Array>;
/**
 * Either a directory of our own, or a section (sublevel) of a database someone else opened; and the
 * folder the snapshot files go in (default: `<path>/snapshots`, or `<database>/<prefix>-snapshots`).
 */
export type LevelStorageOptions = ({ path: string } | { db: Level<any, any>; prefix: string }) & { snapshotDir?: string };

const BLOCK = 'blk!';
const BLOCK_END = 'blk~';
/** Entries of the older one-value-per-entry layout; moved into blocks when the store opens. */
const LEGACY_LOG = 'log!';
const LEGACY_LOG_END = 'log~';
const HARD_STATE = 'hardstate';
/** The first log index kept: blocks starting below it are dead (removed off the main thread). */
const LOG_FLOOR = 'floor'; // not 'log-…': that is inside the legacy log's key range
/** Snapshots as they were kept in LevelDB (data format 1), moved into a file when the store opens: */
/** the one-value layout, */
const SNAPSHOT_META = 'snapshot-meta';
const SNAPSHOT_DATA = 'snapshot-data';
/** and the pieces (PIECE keys of a generation) under a head (LegacyHead). */
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

interface LegacyHead {
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
  /** Commit-only hard states wait for the next batch (hard-state-deferral.ts). */
  private readonly hardStates = new HardStateDeferral();
  /** The log's floor: blocks starting below it are dead (0: none). */
  private floor = 0;
  /** The snapshot files (file-snapshots.ts). */
  readonly snapshotFiles: FileSnapshots;

  constructor(options: LevelStorageOptions) {
    if ('path' in options) {
      this.owned = new Level(options.path, { keyEncoding: 'utf8', valueEncoding: 'view' });
      this.db = this.owned as Db;
      this.root = this.owned;
      this.snapshotFiles = new FileSnapshots(options.snapshotDir ?? join(options.path, 'snapshots'));
    } else {
      this.owned = null;
      this.root = ((options.db as { db?: Level<any, any> }).db ?? options.db) as Level<any, any>;
      this.db = options.db.sublevel<string, Uint8Array>(options.prefix, {
        keyEncoding: 'utf8',
        valueEncoding: 'view',
      }) as unknown as Db;
      this.snapshotFiles = new FileSnapshots(options.snapshotDir ?? join(this.root.location, `${options.prefix}-snapshots`));
    }
  }

  async load(): Promise<PersistedState> {
    const state = await this.loadState(true);
    return state as PersistedState;
  }

  /**
   * Opens the store, which moves a snapshot still in LevelDB (data format 1) into a snapshot file
   * (the agent's data-format migration runs this alone, then closes the store).
   */
  async moveSnapshotsOut(): Promise<void> {
    await this.open();
  }

  /** load() leaving the snapshot's bytes in LevelDB: readSnapshot() hands them out a piece at a time. */
  loadWithoutSnapshotData(): Promise<PersistedStateMeta> {
    return this.loadState(false);
  }

  private async loadState(withData: boolean): Promise<PersistedStateMeta> {
    await this.open();
    const hard = await this.db.get(HARD_STATE);
    const file = this.snapshotFiles.latest;
    const snapshot = !file ? undefined : withData ? await this.snapshotFiles.readAll() : { meta: file.meta };
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
   * The pieces go into a new snapshot file as they come (file-snapshots.ts); commit() finishes and
   * installs it, then compacts the log here, then removes the previous file. A commit that failed
   * (a full disk) may be retried: each step is idempotent.
   */
  createSnapshot(meta: SnapshotMeta, compactTo: number): StorageSnapshotSink {
    let writer: SnapshotFileWriter | null = null;
    let state: 'open' | 'committing' | 'committed' | 'aborted' = 'open';
    const storage = this;
    const opened = async () => {
      await storage.open();
      writer ??= storage.snapshotFiles.create(meta);
      return writer;
    };
    return {
      get size() {
        return writer?.size ?? 0;
      },
      async write(chunk: Uint8Array): Promise<void> {
        if (state !== 'open') throw new Error(`snapshot sink is already ${state}`);
        const w = await opened();
        try {
          await w.write(chunk);
        } catch (err) {
          state = 'aborted';
          await w.abort();
          throw err;
        }
      },
      async commit(): Promise<void> {
        if (state === 'committed' || state === 'aborted') throw new Error(`snapshot sink is already ${state}`);
        state = 'committing';
        const w = await opened();
        // Synced outside the serialised writes: the log's appends do not wait for it.
        await w.finish();
        await storage.serialise(async () => {
          await storage.snapshotFiles.install(w);
          await storage.compactLog(meta, compactTo);
        });
        state = 'committed';
        await storage.snapshotFiles.removeOlder();
      },
      async abort(): Promise<void> {
        if (state === 'committed' || state === 'aborted') return;
        state = 'aborted';
        await writer?.abort();
      },
    };
  }

  async readSnapshot(): Promise<SnapshotReader | undefined> {
    await this.open();
    return this.snapshotFiles.read();
  }

  /**
   * After a snapshot's file is installed: log entries up to `compactTo` go, in one synced batch that
   * raises the floor. A store with no log here (WalStorage keeps it) writes nothing.
   */
  private async compactLog(meta: SnapshotMeta, compactTo: number): Promise<void> {
    if (this.blocks.length === 0 && this.floor === 0) return;
    const ops: Op[] = [];
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
    // Whole blocks below `keepFrom` die with the floor (removed after the batch, off the main
    // thread); one straddling it is rewritten without its head. A log discarded whole is deleted in
    // the batch — it can hold blocks above the snapshot, which a floor would not cover — and the
    // floor moves to just above the snapshot, where the next entry goes.
    const whole = keepFrom === Infinity;
    // A floor never moves down over blocks already dead; only a log discarded whole may set it
    // lower (an older snapshot installed: Raft does not, but then the dead ones are removed first).
    if (whole && this.floor > meta.index + 1) await this.db.clear({ gt: BLOCK, lt: this.liveBlocksFrom() });
    const floor = whole ? meta.index + 1 : Math.max(keepFrom, this.floor);
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
    ops.unshift({ type: 'put', key: LOG_FLOOR, value: this.packr.pack(floor) });
    await this.db.batch(ops, { sync: true });
    this.blocks = kept;
    this.floor = floor;
    this.clearDeadBlocks();
  }

  /** The lowest key of a live block: every block starting below the stored head's floor is dead. */
  private liveBlocksFrom(): string {
    return this.floor ? blockKey(this.floor, 0) : BLOCK;
  }

  /**
   * Removes the dead blocks below the floor with one range delete, which LevelDB runs off the main
   * thread. Unsynced and unawaited: they are ignored wherever the log is read, and a delete lost to
   * a crash is made again when the store next opens.
   */
  private clearDeadBlocks(): void {
    if (!this.floor) return;
    this.db.clear({ gt: BLOCK, lt: this.liveBlocksFrom() }).catch(() => undefined);
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
      ops.push({ type: 'del', key: LOG_FLOOR });
      await this.db.batch(ops, { sync: true });
      this.clearDeadBlocks();
      this.blocks = [];
      this.floor = 0;
      this.lastTerm = 0;
      this.lastVote = null;
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
        this.snapshotFiles.open();
        await this.readFloor();
        await this.moveLegacySnapshot();
        for await (const key of this.db.keys({ gt: this.liveBlocksFrom(), lt: BLOCK_END })) this.blocks.push(parseBlockKey(key));
        this.clearDeadBlocks();
      })();
    }
    return this.opened;
  }

  /** The log's floor: its own key, or (a store of data format 1) the floor in the snapshot's head. */
  private async readFloor(): Promise<void> {
    const [floor, head] = await this.db.getMany([LOG_FLOOR, SNAPSHOT_HEAD]);
    const legacy = head ? (this.packr.unpack(head) as LegacyHead).floor : undefined;
    this.floor = floor ? (this.packr.unpack(floor) as number) : (legacy ?? 0);
  }

  /**
   * A snapshot still in LevelDB (data format 1: pieces under a head, or one value) is written into a
   * snapshot file a piece at a time, installed, and only then deleted here, with the log's floor
   * moved to its own key in the same batch. Run again after a crash: a file of the same snapshot
   * already installed is not written twice. Pieces without a head (a snapshot never committed)
   * are deleted too.
   */
  private async moveLegacySnapshot(): Promise<void> {
    const [headBytes, metaBytes] = await this.db.getMany([SNAPSHOT_HEAD, SNAPSHOT_META]);
    const head = headBytes ? (this.packr.unpack(headBytes) as LegacyHead) : null;
    const meta = head ? head.meta : metaBytes ? (this.packr.unpack(metaBytes) as SnapshotMeta) : null;
    if (meta) {
      const have = this.snapshotFiles.latest?.meta;
      if (!have || have.index < meta.index || (have.index === meta.index && have.term !== meta.term)) {
        const writer = this.snapshotFiles.create(meta);
        try {
          if (head) {
            for (let i = 0; i < head.chunks; i++) {
              const piece = await this.db.get(pieceKey(head.gen, i));
              if (!piece) throw new Error(`raft snapshot piece ${i} of generation ${head.gen} is missing`);
              await writer.write(piece);
            }
          } else {
            const data = await this.db.get(SNAPSHOT_DATA);
            if (!data) throw new Error('raft snapshot data is missing');
            await writer.write(data);
          }
          await writer.finish();
        } catch (err) {
          await writer.abort();
          throw err;
        }
        await this.snapshotFiles.install(writer);
      }
    }
    let pieces = false;
    for await (const key of this.db.keys({ gt: PIECE, lt: PIECE_END, limit: 1 })) pieces = !!key;
    if (!meta && !pieces) return;
    const ops: Op[] = [
      { type: 'del', key: SNAPSHOT_HEAD },
      { type: 'del', key: SNAPSHOT_META },
      { type: 'del', key: SNAPSHOT_DATA },
    ];
    if (this.floor) ops.push({ type: 'put', key: LOG_FLOOR, value: this.packr.pack(this.floor) });
    await this.db.batch(ops, { sync: true });
    // Off the main thread; the pieces are nobody's any more (run again on the next open if lost).
    await this.db.clear({ gt: PIECE, lt: PIECE_END });
    await this.snapshotFiles.removeOlder();
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
    // A failed compaction may or may not have reached the disk: the floor on disk is the truth.
    await this.readFloor();
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
