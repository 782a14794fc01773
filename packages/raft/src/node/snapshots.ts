// This server's own snapshots, hashicorp/raft's snapshot.go beside its main loop: when one is due
// (shouldSnapshot: a threshold of applied entries, spaced under load or on an interval, and a bound
// on the log), taking it from the state machine (the FSM's point-in-time handle), persisting it into
// storage in the background a piece at a time (FSMSnapshot.Persist into a SnapshotSink), and the
// log compaction it allows (compactLogs), handed to the driver to run between two Readies. Also the
// latest stored snapshot, which a follower far behind is sent (snapshot-transfer.ts) and which a
// snapshot installed from the leader replaces, and a failed write's retries (storage-fault.ts).
import type { SnapshotMeta } from '../core/types';
import type { FSMSnapshot, SnapshotData, SnapshotReader } from '../interfaces';
import { monotonicMs } from '../monotonic-clock';
import { snapshotSize } from '../storage/snapshot-chunks';
import type { ResolvedOptions } from './options';
import { Backoff, describeStorageError, type StorageFault, type StorageRecovery } from './storage-fault';

/** Retry schedule of a failed background snapshot write. */
const SNAPSHOT_RETRY = { firstMs: 1_000, maxMs: 10_000 };

/** A state machine's snapshot(): a point-in-time handle, or bytes serialised already. */
function isHandle(taken: Uint8Array | FSMSnapshot): taken is FSMSnapshot {
  return typeof (taken as Partial<FSMSnapshot>).persist === 'function';
}

/** What the snapshots need of the node that drives them (raft-node.ts). */
export interface SnapshotsHost {
  opts: ResolvedOptions;
  /** The last index applied to the state machine. */
  applied(): number;
  /**
   * This server's place among the voters of the latest configuration (`rank` of `of`, in id order),
   * or null when it is not one of them (the log bound's phase: see boundIndex()).
   */
  voterRank(): { rank: number; of: number } | null;
  /** The core's meta for a snapshot at `index`, or undefined once that entry is compacted away. */
  snapshotMeta(index: number): SnapshotMeta | undefined;
  stopped(): boolean;
  /** Whether a retry timer may take a snapshot now (no Ready in flight, no log fault). */
  mayTakeNow(): boolean;
  /** A snapshot was written: run the driver's next turn (it compacts between Readies). */
  written(): void;
  /** Counted in the node's stats. */
  taken(): void;
  /** 'storage-fault' and 'storage-recovered' events of the node. */
  emit(event: 'storage-fault', fault: StorageFault): void;
  emit(event: 'storage-recovered', recovery: StorageRecovery): void;
  logError(o: object, msg: string): void;
}

export class Snapshots {
  /**
   * The latest stored snapshot. Its bytes are kept only when the storage cannot read them back a
   * piece at a time (readSnapshot); otherwise a follower is sent them from storage.
   */
  private latestSnapshot: { meta: SnapshotMeta; data?: SnapshotData } | undefined;
  private appliedSinceSnapshot = 0;
  /** A snapshot being persisted and written in the background, and the compaction that waits for it. */
  private snapshotWrite: Promise<void> | null = null;
  private pendingCompaction: { meta: SnapshotMeta; compactTo: number } | null = null;
  /**
   * Entries at or below this index are of no use any more (discardThrough): the next snapshot
   * covering it compacts them away whatever trailingLogs keeps, and is due at once.
   */
  private obsoleteThrough = 0;
  private obsoletePending = false;
  /** The state machine's handle while it persists (stop() and a covering install release it). */
  private snapshotHandle: { index: number; handle: FSMSnapshot } | null = null;
  /**
   * The highest index of a snapshot installed from a leader (once its write is issued). A snapshot
   * of ours at or below it is not written: it would land on disk after, and over, the newer one.
   */
  private installedThrough = 0;
  /** When the last snapshot was done and the event-loop time the state machine spent on it. */
  private lastSnapshotAt = 0;
  private lastSnapshotCostMs = 0;
  /** snapshotIntervalMs > 0: no snapshot before this (monotonicMs()) unless the log bound is reached. */
  private nextSnapshotCheckAt = 0;
  /**
   * snapshotIntervalMs > 0, for a server that is not a voter: its phase of the log bound (random,
   * below the threshold; a voter's comes from its rank, see boundIndex()).
   */
  private randomPhase = 0;
  /** When the snapshot being written was started (monotonicMs()), for the observer. */
  private snapshotStartedAt = 0;
  /** A state machine's persist() failed: no new snapshot before this (monotonicMs()). */
  private persistRetryAt = 0;
  /** A background snapshot write failed; retried at snapshotRetryAt (monotonicMs()). */
  private snapshotFault: StorageFault | null = null;
  private snapshotRetryAt = 0;
  private snapshotRetryTimer: NodeJS.Timeout | null = null;
  private readonly snapshotBackoff = new Backoff(SNAPSHOT_RETRY.firstMs, SNAPSHOT_RETRY.maxMs);
  private readonly opts: ResolvedOptions;

  constructor(private readonly host: SnapshotsHost, stored: { meta: SnapshotMeta; data?: Uint8Array } | undefined) {
    this.opts = host.opts;
    // Without readSnapshot the bytes were loaded (and are kept); with it they stay in storage.
    this.latestSnapshot = stored && (stored.data ? this.keptSnapshot(stored.meta, stored.data) : { meta: stored.meta });
  }

  /** The latest stored snapshot's meta (ours or installed), if any. */
  get latest(): SnapshotMeta | undefined {
    return this.latestSnapshot?.meta;
  }

  /** A background snapshot write that keeps failing (StorageFault kind 'snapshot'), else null. */
  get fault(): StorageFault | null {
    return this.snapshotFault;
  }

  /** The node starts ticking. */
  start(): void {
    if (this.opts.snapshotIntervalMs > 0) this.randomPhase = Math.floor(this.opts.random() * this.opts.snapshotThreshold);
    this.armSnapshotCheck();
  }

  /** The node stops: a snapshot being persisted stops at its next slice, no retry is left pending. */
  stop(): void {
    if (this.snapshotRetryTimer) clearTimeout(this.snapshotRetryTimer);
    this.snapshotRetryTimer = null;
    this.snapshotHandle?.handle.release();
  }

  /** Resolves once no snapshot is being written. */
  async settled(): Promise<void> {
    await this.snapshotWrite?.catch(() => undefined);
  }

  /** `count` entries were applied to the state machine. */
  applied(count: number): void {
    this.appliedSinceSnapshot += count;
  }

  /**
   * The state machine's state no longer depends on the entries through `index` (a restore replaced
   * it): a snapshot is due as soon as `index` is applied, and it compacts the log through `index`
   * instead of keeping trailingLogs entries. Those entries are what a follower behind would be
   * sent; it is sent the snapshot instead, which holds the same state. The log kept them, and the
   * bytes the replaced state's values share with them, for nothing until enough later writes came
   * (issue #34: a restore over a large state left up to 18,432 entries of the old one in memory).
   */
  discardThrough(index: number): void {
    if (index <= this.obsoleteThrough) return;
    this.obsoleteThrough = index;
    this.obsoletePending = true;
  }

  /** The compaction a written snapshot allows, once (the driver runs it between two Readies). */
  takeCompaction(): { meta: SnapshotMeta; compactTo: number } | null {
    const c = this.pendingCompaction;
    this.pendingCompaction = null;
    return c;
  }

  /**
   * A snapshot from the leader at `index` is about to be written: a snapshot of ours still being
   * persisted is older, so it is dropped, never written after this.
   */
  installing(index: number): void {
    this.installedThrough = Math.max(this.installedThrough, index);
    if (this.snapshotHandle && this.snapshotHandle.index <= index) this.snapshotHandle.handle.release();
  }

  /** A snapshot from the leader is on disk and restored: it is the latest, and the count starts over. */
  installed(meta: SnapshotMeta, data: SnapshotData): void {
    this.latestSnapshot = this.keptSnapshot(meta, data);
    this.appliedSinceSnapshot = 0;
  }

  /**
   * Every snapshotThreshold applied entries, spaced under a heavy write load so that at most ~1 % of
   * the event loop's time goes to snapshots (as hashicorp/raft spaces them by SnapshotInterval): a
   * state machine that hands out a point-in-time handle no longer stalls the loop, but persisting
   * it still costs the same CPU (≈ 1 s for 100,000 catalog nodes), taken from the applies it runs
   * between. The log still never grows past 8 × snapshotThreshold entries since the last one.
   */
  due(): boolean {
    if (this.snapshotWrite) return false;
    if (this.snapshotFault && monotonicMs() < this.snapshotRetryAt) return false;
    if (monotonicMs() < this.persistRetryAt) return false;
    if (this.obsoletePending && this.host.applied() >= this.obsoleteThrough) return true;
    if (this.appliedSinceSnapshot < this.opts.snapshotThreshold) return false;
    if (this.host.applied() >= this.boundIndex()) return true;
    if (this.opts.snapshotIntervalMs > 0) return monotonicMs() >= this.nextSnapshotCheckAt;
    return monotonicMs() - this.lastSnapshotAt >= 100 * this.lastSnapshotCostMs;
  }

  /**
   * Takes a snapshot of the state machine as of the last applied entry. A state machine that returns
   * a handle (FSMSnapshot) is persisted in the background while the Ready loop keeps applying, as
   * hashicorp/raft runs FSMSnapshot.Persist; one that returns bytes has serialised them already.
   * Then the bytes are written in the background, and the core compacts its log between two Readies
   * once they are on disk. (Written after later appends: those only add entries above the
   * snapshot's index, which compaction never touches.)
   */
  take(): void {
    const index = this.host.applied();
    const meta = this.host.snapshotMeta(index);
    if (!meta) {
      // The applied entry is already compacted: the latest snapshot covers it.
      if ((this.latestSnapshot?.meta.index ?? 0) >= this.obsoleteThrough) this.obsoletePending = false;
      return;
    }
    const started = monotonicMs();
    const taken = this.opts.fsm.snapshot();
    const takeMs = monotonicMs() - started;
    this.snapshotStartedAt = started;
    const covered = this.appliedSinceSnapshot;
    this.appliedSinceSnapshot = 0;
    this.armSnapshotCheck();
    let compactTo = Math.max(0, index - this.opts.trailingLogs);
    if (this.obsoletePending && index >= this.obsoleteThrough) {
      compactTo = Math.max(compactTo, this.obsoleteThrough);
      this.obsoletePending = false;
    }
    const handle = isHandle(taken) ? taken : null;
    this.snapshotHandle = handle && { index, handle };
    const write: Promise<void> = this.writeSnapshot(meta, compactTo, taken, takeMs, covered)
      .catch((err: unknown) => this.host.logError({ id: this.opts.id, err: describeStorageError(err) }, 'raft: taking a snapshot failed'))
      .finally(() => {
        if (this.snapshotWrite === write) this.snapshotWrite = null;
      });
    this.snapshotWrite = write;
  }

  /** The latest stored snapshot, a piece at a time: from storage, or the bytes kept in memory. */
  async openStored(): Promise<SnapshotReader | undefined> {
    if (this.opts.storage.readSnapshot) return this.opts.storage.readSnapshot();
    const snap = this.latestSnapshot;
    if (!snap?.data) return undefined;
    const pieces = snap.data instanceof Uint8Array ? [snap.data] : snap.data;
    return {
      meta: snap.meta,
      size: snapshotSize(pieces),
      chunks: pieces.length,
      read: async (i) => pieces[i],
      close: () => undefined,
    };
  }

  /**
   * The applied index at which the log bound forces a snapshot: 8 × snapshotThreshold entries after
   * the last one, and with snapshotIntervalMs > 0 (where under a write load the bound is what takes
   * every snapshot) at most one threshold more, to the next index whose place within a threshold
   * is this server's phase. Voters take evenly spaced phases by rank, so the servers of one log
   * snapshot one after another instead of together: at 1 GiB a snapshot costs each server seconds
   * of CPU, and three at once on one machine left every loop waiting for a core (issue #34,
   * docs/benchmarks/history.md). On separate hosts it keeps a majority not snapshotting. The phase
   * is of the absolute index, so a snapshot taken late (a batch applied past the bound, or a write
   * still under way) does not shift the next one.
   */
  private boundIndex(): number {
    const threshold = this.opts.snapshotThreshold;
    const from = this.host.applied() - this.appliedSinceSnapshot + 8 * threshold;
    if (this.opts.snapshotIntervalMs === 0) return from;
    const place = this.host.voterRank();
    const phase = place ? Math.floor((place.rank * threshold) / place.of) : this.randomPhase;
    return from + ((((phase - from) % threshold) + threshold) % threshold);
  }

  /**
   * snapshotIntervalMs > 0: the next snapshot waits interval..2×interval ms (hashicorp/raft's
   * randomTimeout), drawn afresh each time so that servers started together drift apart.
   */
  private armSnapshotCheck(): void {
    const interval = this.opts.snapshotIntervalMs;
    if (interval > 0) this.nextSnapshotCheckAt = monotonicMs() + interval * (1 + this.opts.random());
  }

  /**
   * The background part of take(): persist (a handle), then write and schedule compaction.
   * When the state machine and the storage both can, the handle is persisted straight into a storage
   * sink a piece at a time (hashicorp/raft's Persist(sink)), so the snapshot never exists as one
   * buffer here: at 100,000 catalog nodes that buffer (~70 MB) is what started V8's major GCs.
   */
  private async writeSnapshot(meta: SnapshotMeta, compactTo: number, taken: Uint8Array | FSMSnapshot, takeMs: number, covered: number): Promise<void> {
    const storage = this.opts.storage;
    let data: SnapshotData | undefined;
    let costMs = takeMs;
    const sink = isHandle(taken) && taken.persistTo && storage.createSnapshot && storage.readSnapshot ? storage.createSnapshot(meta, compactTo) : null;
    if (isHandle(taken)) {
      const started = monotonicMs();
      /** Set when writing a piece failed: a storage fault, not the state machine's. */
      let sinkError: { err: unknown } | null = null;
      try {
        if (sink) {
          await taken.persistTo!({
            write: (chunk) =>
              sink.write(chunk).catch((err: unknown) => {
                sinkError = { err };
                throw err;
              }),
          });
        } else {
          data = await taken.persist();
        }
      } catch (err) {
        await sink?.abort().catch(() => undefined);
        // Released on purpose (stop(), or an installed snapshot covers it): nothing to do.
        if (this.host.stopped() || this.installedThrough >= meta.index) return;
        this.appliedSinceSnapshot += covered;
        const failed = sinkError as { err: unknown } | null;
        if (failed) this.snapshotFailed(failed.err);
        else this.persistFailed(err);
        return;
      } finally {
        taken.release();
        if (this.snapshotHandle?.handle === taken) this.snapshotHandle = null;
      }
      costMs += taken.costMs ?? monotonicMs() - started;
    } else {
      data = taken;
    }
    this.lastSnapshotAt = monotonicMs();
    this.lastSnapshotCostMs = costMs;
    if (this.host.stopped() || this.installedThrough >= meta.index) {
      await sink?.abort().catch(() => undefined);
      return;
    }
    try {
      // Issued before any later install's write (installedThrough is checked just above), so a
      // newer snapshot from the leader always lands after, and over, this one.
      if (sink) await sink.commit();
      else await storage.saveSnapshot(meta, data!, compactTo);
    } catch (err) {
      // What was written of it goes (a temporary snapshot file each time would fill a full disk further).
      await sink?.abort().catch(() => undefined);
      if (this.host.stopped()) return;
      // Nothing depends on a snapshot being written: the log it would compact is still whole.
      // Keep counting towards the next one and try again later.
      this.appliedSinceSnapshot += covered;
      this.snapshotFailed(err);
      return;
    }
    if (this.host.stopped()) return;
    const bytes = sink ? sink.size : snapshotSize(data!);
    // An installed snapshot may have overtaken this one meanwhile; keep the newer.
    if (!this.latestSnapshot || meta.index > this.latestSnapshot.meta.index) this.latestSnapshot = sink ? { meta } : this.keptSnapshot(meta, data!);
    this.pendingCompaction = { meta, compactTo };
    this.host.taken();
    this.opts.observer.snapshotTaken?.(monotonicMs() - this.snapshotStartedAt, bytes);
    this.opts.logger.info(
      { id: this.opts.id, index: meta.index, compactTo, takeMs: Math.round(takeMs), costMs: Math.round(costMs), bytes, streamed: sink !== null },
      'raft: took snapshot',
    );
    if (this.snapshotFault) this.snapshotRecovered();
    else this.snapshotBackoff.reset();
    this.host.written();
  }

  /** What latestSnapshot keeps of a stored snapshot: its bytes only if storage cannot read them back. */
  private keptSnapshot(meta: SnapshotMeta, data: SnapshotData): { meta: SnapshotMeta; data?: SnapshotData } {
    return this.opts.storage.readSnapshot ? { meta } : { meta, data };
  }

  /** The state machine could not persist a snapshot (a bug in it): log, and try again later. */
  private persistFailed(err: unknown): void {
    const delay = this.snapshotBackoff.take();
    this.persistRetryAt = monotonicMs() + delay;
    this.host.logError({ id: this.opts.id, err: describeStorageError(err), retryMs: delay }, 'raft: the state machine failed to persist a snapshot; the log cannot be compacted until a retry succeeds');
  }

  private snapshotFailed(err: unknown): void {
    const cause = describeStorageError(err);
    const delay = this.snapshotBackoff.take();
    const now = monotonicMs();
    this.snapshotRetryAt = monotonicMs() + delay;
    if (this.snapshotFault) {
      this.snapshotFault.retries++;
      this.snapshotFault.lastError = cause;
      this.snapshotFault.nextRetryAt = now + delay;
      this.opts.logger.debug({ id: this.opts.id, err: cause, retries: this.snapshotFault.retries }, 'raft: writing a snapshot still fails');
    } else {
      this.snapshotFault = { kind: 'snapshot', message: `raft storage failed: ${cause}`, since: now, retries: 0, lastError: cause, nextRetryAt: now + delay };
      this.host.logError({ id: this.opts.id, err: cause }, 'raft: writing a snapshot failed; the log cannot be compacted until a retry succeeds');
      this.host.emit('storage-fault', { ...this.snapshotFault });
    }
    // A quiet server would otherwise only retry with its next write.
    if (this.snapshotRetryTimer) clearTimeout(this.snapshotRetryTimer);
    this.snapshotRetryTimer = setTimeout(() => {
      this.snapshotRetryTimer = null;
      if (!this.host.stopped() && this.host.mayTakeNow() && this.due()) this.take();
    }, delay);
    this.snapshotRetryTimer.unref?.();
  }

  private snapshotRecovered(): void {
    const fault = this.snapshotFault!;
    this.snapshotFault = null;
    this.snapshotBackoff.reset();
    const recovery: StorageRecovery = { kind: 'snapshot', message: fault.message, since: fault.since, retries: fault.retries, downMs: monotonicMs() - fault.since };
    this.opts.logger.info({ id: this.opts.id, downMs: recovery.downMs, retries: fault.retries }, 'raft: snapshot written again; storage recovered');
    this.host.emit('storage-recovered', recovery);
  }
}
