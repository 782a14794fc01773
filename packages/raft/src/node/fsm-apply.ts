// The state machine's side of the driver (hashicorp/raft's fsm.go): committed entries applied in
// order, each proposer answered with the state machine's result, and a snapshot from the leader
// (on disk already: log-writer.ts) restored — a piece at a time where the state machine and the
// storage can. Also the restore of the stored snapshot at start (loadRestoring).
import { EntryType, type Entry, type SnapshotMeta } from '../core/types';
import { LeadershipLostError, NotReady, type PersistedStateMeta, type SnapshotData, type SnapshotSource, type StorageSnapshotSink } from '../interfaces';
import { monotonicMs } from '../monotonic-clock';
import { joinSnapshot, snapshotSize } from '../storage/snapshot-chunks';
import type { NodeMetrics } from './node-metrics';
import type { ResolvedOptions } from './options';
import type { PendingProposals } from './pending-proposals';
import type { Snapshots } from './snapshots';

/** Committed entries are applied in slices of about this many ms of event-loop time (apply()). */
const APPLY_SLICE_MS = 8;
/** The clock is read after every this many entries applied. */
const APPLY_CHECK_EVERY = 64;

/** A snapshot from the leader to install: its bytes, or the storage sink they were written into. */
export interface Install {
  meta: SnapshotMeta;
  data?: SnapshotData;
  sink?: StorageSnapshotSink;
}

export interface FsmApplyDeps {
  opts: ResolvedOptions;
  proposed: PendingProposals;
  snapshots: Snapshots;
  metrics: NodeMetrics;
  /** An installed snapshot's configuration names servers this one may not have heard of yet. */
  learnAddresses(configuration: SnapshotMeta['configuration']): void;
  /** The node's 'applied' event. */
  emitApplied(index: number): void;
}

export class FsmApply {
  /** The last index applied to the state machine (or covered by the snapshot it was restored from). */
  applied: number;

  constructor(
    private readonly deps: FsmApplyDeps,
    restoredFrom: number,
  ) {
    this.applied = restoredFrom;
  }

  /**
   * Applies `entries` in slices of about APPLY_SLICE_MS, yielding to the event loop between them
   * (issue #34: a restart hands the whole log after the snapshot — ten thousand entries and more —
   * to one Ready, and applying it in one go held the loop for a second on a busy machine; so can a
   * follower that was cut off for a while). Answers the ms the applies themselves took.
   */
  async apply(entries: Entry[], stopped: () => boolean): Promise<number> {
    let busyMs = 0;
    let from = 0;
    while (from < entries.length) {
      const started = monotonicMs();
      let waitFor: Promise<unknown> | undefined;
      do {
        const to = Math.min(entries.length, from + APPLY_CHECK_EVERY);
        const stop = this.applySome(entries, from, to);
        from = stop.at;
        waitFor = stop.notReady?.until;
      } while (!waitFor && from < entries.length && monotonicMs() - started < APPLY_SLICE_MS);
      busyMs += monotonicMs() - started;
      this.deps.emitApplied(this.applied);
      if (waitFor) {
        if (!(await settledUnlessStopped(waitFor, stopped))) break;
      } else if (from < entries.length) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (stopped()) break;
      }
    }
    return busyMs;
  }

  /**
   * Applies entries[from, to) (those a snapshot installed meanwhile does not cover); stops before
   * one the state machine is not ready for, with its NotReady. Answers where it stopped.
   */
  private applySome(entries: Entry[], from: number, to: number): { at: number; notReady?: NotReady } {
    const { opts, proposed } = this.deps;
    const lost = () => new LeadershipLostError();
    let count = 0;
    let i = from;
    let notReady: NotReady | undefined;
    for (; i < to; i++) {
      const e = entries[i];
      if (e.index <= this.applied) continue; // covered by a snapshot installed meanwhile
      let outcome: { result: unknown } | { error: Error } = { result: undefined };
      if (e.type === EntryType.Normal) {
        try {
          const result = opts.fsm.apply(e.index, e.data);
          if (result instanceof NotReady) {
            notReady = result;
            break;
          }
          outcome = { result };
        } catch (err) {
          // A state machine that throws is a bug in it; the proposer hears about it, the log moves on.
          opts.logger.warn({ err, index: e.index }, 'raft: state machine apply threw');
          outcome = { error: err instanceof Error ? err : new Error(String(err)) };
        }
      }
      this.applied = e.index;
      count++;
      proposed.applied(e.index, e.term, outcome, lost);
    }
    this.deps.snapshots.applied(count);
    this.deps.metrics.counters.appliedEntries += i - from;
    return { at: i, notReady };
  }

  /**
   * A snapshot from the leader is on disk (log-writer.ts saved it): the state machine becomes it.
   * Its pieces are joined here only for a state machine without restoreFrom.
   */
  async restore(snapshot: Install): Promise<void> {
    const { opts } = this.deps;
    if (snapshot.sink) {
      // Written straight into the storage as the pieces came: read back from there, a piece at a time.
      const reader = await opts.storage.readSnapshot!();
      if (!reader || reader.meta.index !== snapshot.meta.index || reader.meta.term !== snapshot.meta.term) throw new Error('raft: the installed snapshot is not the stored one');
      try {
        if (opts.fsm.restoreFrom) await restoreWithProgress(opts, reader, snapshot.meta, reader.size, 'installed');
        else {
          const pieces: Uint8Array[] = [];
          for (let i = 0; i < reader.chunks; i++) pieces.push(await reader.read(i));
          opts.fsm.restore(joinSnapshot(pieces), snapshot.meta);
        }
      } finally {
        reader.close();
      }
      snapshot.data = [];
    } else if (opts.fsm.restoreFrom) {
      // Piece by piece, each let go once decoded (the pieces are on disk already): no joined copy.
      const data = snapshot.data!;
      const pieces: (Uint8Array | undefined)[] = data instanceof Uint8Array ? [data] : [...data];
      const size = snapshotSize(data);
      // The caller's object lets go of them too (the storage reads them back when a follower needs them).
      if (opts.storage.readSnapshot) snapshot.data = [];
      const source = {
        chunks: pieces.length,
        read: async (i: number) => {
          const piece = pieces[i];
          pieces[i] = undefined;
          if (!piece) throw new Error(`raft: snapshot piece ${i} read twice`);
          return piece;
        },
      };
      await restoreWithProgress(opts, source, snapshot.meta, size, 'installed');
    } else {
      opts.fsm.restore(joinSnapshot(snapshot.data!), snapshot.meta);
    }
    this.deps.snapshots.installed(snapshot.meta, snapshot.data!);
    this.applied = snapshot.meta.index;
    this.deps.learnAddresses(snapshot.meta.configuration);
    this.deps.proposed.failThrough(snapshot.meta.index, () => new LeadershipLostError());
    this.deps.metrics.counters.snapshotsInstalled++;
    opts.logger.info({ id: opts.id, index: snapshot.meta.index }, 'raft: installed snapshot');
    this.deps.emitApplied(this.applied);
  }
}

/**
 * Loads what storage holds and restores the state machine from the stored snapshot (hashicorp/raft's
 * restoreSnapshot at NewRaft). A state machine and a storage that can restore it a piece at a time,
 * never read whole (issue #34: a restart at 256 MiB of state held the bytes twice over).
 */
export async function loadRestoring(opts: ResolvedOptions): Promise<PersistedStateMeta & { snapshot?: { meta: SnapshotMeta; data?: Uint8Array } }> {
  const storage = opts.storage;
  const streamed = opts.fsm.restoreFrom && storage.readSnapshot && storage.loadWithoutSnapshotData ? storage : null;
  const persisted: PersistedStateMeta & { snapshot?: { meta: SnapshotMeta; data?: Uint8Array } } = streamed ? await streamed.loadWithoutSnapshotData!() : await storage.load();
  if (!persisted.snapshot) return persisted;
  if (streamed) {
    const reader = await streamed.readSnapshot!();
    if (!reader || reader.meta.index !== persisted.snapshot.meta.index) throw new Error('raft: the stored snapshot changed while it was being loaded');
    try {
      await restoreWithProgress(opts, reader, reader.meta, reader.size, 'stored');
    } finally {
      reader.close();
    }
  } else {
    opts.fsm.restore(persisted.snapshot.data!, persisted.snapshot.meta);
  }
  return persisted;
}

/**
 * fsm.restoreFrom(source), saying what it does: a line when it starts and when it is done, and one
 * at most every 2 s in between with the pieces read so far (a restart at a large state is otherwise
 * silent for seconds: issue #34).
 */
export async function restoreWithProgress(
  opts: Pick<ResolvedOptions, 'fsm' | 'logger' | 'id'>,
  source: SnapshotSource,
  meta: SnapshotMeta,
  bytes: number,
  what: 'stored' | 'installed',
): Promise<void> {
  const started = monotonicMs();
  const mib = (n: number) => Math.round((n / (1 << 20)) * 10) / 10;
  opts.logger.info({ id: opts.id, index: meta.index, mib: mib(bytes), pieces: source.chunks }, `raft: restoring the ${what} snapshot`);
  let lastLine = started;
  let read = 0;
  let readBytes = 0;
  const progress = (bytes: number, pieces: string): void => {
    readBytes += bytes;
    const now = monotonicMs();
    if (now - lastLine >= 2_000) {
      lastLine = now;
      opts.logger.info({ id: opts.id, index: meta.index, pieces, mib: mib(readBytes), ms: Math.round(now - started) }, `raft: restoring the ${what} snapshot`);
    }
  };
  const { readRange } = source;
  const counted: SnapshotSource = {
    chunks: source.chunks,
    read: async (i) => {
      const piece = await source.read(i);
      read++;
      progress(piece.length, `${read}/${source.chunks}`);
      return piece;
    },
    ...(readRange && source.size !== undefined
      ? {
          size: source.size,
          readRange: async (offset: number, into: Uint8Array) => {
            await readRange.call(source, offset, into);
            progress(into.length, `${Math.round(((offset + into.length) / source.size!) * source.chunks)}/${source.chunks}`);
          },
        }
      : {}),
  };
  await opts.fsm.restoreFrom!(counted, meta);
  opts.logger.info({ id: opts.id, index: meta.index, mib: mib(bytes), ms: Math.round(monotonicMs() - started) }, `raft: restored the ${what} snapshot`);
}

/**
 * Waits for `until` (either way: a rejection is the state machine's to handle when it is offered the
 * entry again), looking every 100 ms whether the node stopped meanwhile. False when it did.
 */
async function settledUnlessStopped(until: Promise<unknown>, stopped: () => boolean): Promise<boolean> {
  let settled = false;
  const done = until.then(
    () => void (settled = true),
    () => void (settled = true),
  );
  while (!settled) {
    if (stopped()) return false;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([done, new Promise<void>((resolve) => (timer = setTimeout(resolve, 100)))]);
    clearTimeout(timer);
  }
  return !stopped();
}
