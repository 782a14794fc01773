// The Raft log, hard state and latest snapshot in LevelDB. Every write is one atomic batch,
// so a crash leaves either all or none of it, and every batch is synced (LevelDB's default is
// unsynced: an acknowledged entry or a granted vote could otherwise vanish).
//
// A hard state that only moves the commit index is not written on its own: it waits for the
// next batch (or close). The commit index need not be durable (etcd syncs only for entries,
// term or vote — its MustSync): after a crash a server re-learns it from the leader. Writing it
// separately cost one more fsync per commit on every server, and the driver applies only after
// the write, so it sat on every write's critical path.
import { Level } from 'level';
import { Packr } from 'msgpackr';
import type { Entry, EntryType, HardState, SnapshotMeta } from '../core/types';
import type { PersistedState, RaftStorage } from '../interfaces';

type Db = Level<string, Uint8Array>;
/** Either a directory of our own, or a section (sublevel) of a database someone else opened. */
export type LevelStorageOptions = { path: string } | { db: Level<any, any>; prefix: string };

const LOG = 'log!';
const LOG_END = 'log~'; // '~' sorts after every hex digit
const HARD_STATE = 'hardstate';
const SNAPSHOT_META = 'snapshot-meta';
const SNAPSHOT_DATA = 'snapshot-data';

/** Fixed-width hex so lexicographic key order is index order. */
function logKey(index: number): string {
  return LOG + index.toString(16).padStart(14, '0');
}

type Op = { type: 'put'; key: string; value: Uint8Array } | { type: 'del'; key: string };

export class LevelStorage implements RaftStorage {
  private readonly packr = new Packr({ useRecords: false });
  private readonly db: Db;
  private readonly owned: Level<any, any> | null;
  /** Bounds of the stored log, so suffix and prefix deletes need no read. 0/0 = empty. */
  private firstIndex = 0;
  private lastIndex = 0;
  private opened: Promise<void> | null = null;
  /** Writes are serialised so the tracked bounds always match the disk. */
  private tail: Promise<void> = Promise.resolve();
  /** Term and vote of the last hard state handed to append, to tell a commit-only change. */
  private lastTerm = 0;
  private lastVote: string | null = null;
  /** A commit-only hard state not written yet; it rides with the next batch. */
  private deferredHard: HardState | undefined;

  constructor(options: LevelStorageOptions) {
    if ('path' in options) {
      this.owned = new Level(options.path, { keyEncoding: 'utf8', valueEncoding: 'view' });
      this.db = this.owned as Db;
    } else {
      this.owned = null;
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
    for await (const [key, value] of this.db.iterator({ gt: LOG, lt: LOG_END })) {
      entries.push(this.decodeEntry(parseInt(key.slice(LOG.length), 16), value));
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
    const termOrVote = hardState !== undefined && (hardState.term !== this.lastTerm || hardState.vote !== this.lastVote);
    if (hardState) {
      this.lastTerm = hardState.term;
      this.lastVote = hardState.vote;
    }
    if (entries.length === 0 && !termOrVote) {
      if (hardState) this.deferredHard = hardState;
      return this.tail;
    }
    // Hard states reach us in order: a newer one supersedes the deferred one.
    const hard = hardState ?? this.deferredHard;
    this.deferredHard = undefined;
    return this.serialise(async () => {
      const ops: Op[] = [];
      if (hard) ops.push({ type: 'put', key: HARD_STATE, value: this.packr.pack(hard) });
      if (entries.length > 0) {
        const first = entries[0].index;
        const last = entries[entries.length - 1].index;
        for (const e of entries) ops.push({ type: 'put', key: logKey(e.index), value: this.encodeEntry(e) });
        // A conflicting suffix longer than the new entries must not survive them.
        for (let i = Math.max(last + 1, this.firstIndex); i <= this.lastIndex; i++) {
          ops.push({ type: 'del', key: logKey(i) });
        }
        if (this.lastIndex === 0 || first < this.firstIndex) this.firstIndex = first;
        this.lastIndex = last;
      }
      await this.db.batch(ops, { sync: true });
    });
  }

  saveSnapshot(meta: SnapshotMeta, data: Uint8Array, compactTo: number): Promise<void> {
    return this.serialise(async () => {
      const ops: Op[] = [
        { type: 'put', key: SNAPSHOT_META, value: this.packr.pack(meta) },
        { type: 'put', key: SNAPSHOT_DATA, value: data },
      ];
      let keepFrom = compactTo + 1;
      if (this.lastIndex !== 0 && meta.index >= this.firstIndex && meta.index <= this.lastIndex) {
        const stored = await this.db.get(logKey(meta.index));
        // Raft §7: a log that disagrees with the snapshot at its last index is discarded whole.
        if (!stored || this.decodeEntry(meta.index, stored).term !== meta.term) keepFrom = Infinity;
      } else {
        keepFrom = Infinity;
      }
      const dropTo = Math.min(keepFrom - 1, this.lastIndex);
      if (this.lastIndex !== 0) {
        for (let i = this.firstIndex; i <= dropTo; i++) ops.push({ type: 'del', key: logKey(i) });
      }
      await this.db.batch(ops, { sync: true });
      if (this.lastIndex !== 0 && dropTo >= this.firstIndex) {
        if (dropTo >= this.lastIndex) this.firstIndex = this.lastIndex = 0;
        else this.firstIndex = dropTo + 1;
      }
    });
  }

  async close(): Promise<void> {
    const hard = this.deferredHard;
    this.deferredHard = undefined;
    if (hard) await this.serialise(() => this.db.batch([{ type: 'put', key: HARD_STATE, value: this.packr.pack(hard) }], { sync: true })).catch(() => undefined);
    await this.tail.catch(() => undefined);
    if (this.owned) await this.owned.close();
  }

  private open(): Promise<void> {
    if (!this.opened) {
      this.opened = (async () => {
        await this.db.open();
        for await (const key of this.db.keys({ gt: LOG, lt: LOG_END, limit: 1 })) {
          this.firstIndex = parseInt(key.slice(LOG.length), 16);
        }
        for await (const key of this.db.keys({ gt: LOG, lt: LOG_END, limit: 1, reverse: true })) {
          this.lastIndex = parseInt(key.slice(LOG.length), 16);
        }
      })();
    }
    return this.opened;
  }

  private serialise(write: () => Promise<void>): Promise<void> {
    const run = this.tail.then(() => this.open()).then(write);
    this.tail = run.catch(() => undefined);
    return run;
  }

  // An entry is stored as [term, type, data]; its index is the key.
  private encodeEntry(e: Entry): Uint8Array {
    return this.packr.pack([e.term, e.type, e.data]);
  }

  private decodeEntry(index: number, value: Uint8Array): Entry {
    const [term, type, data] = this.packr.unpack(value) as [number, EntryType, Uint8Array];
    return { term, index, type, data };
  }
}
