// The storage half of the Ready loop (hashicorp/raft's log store writes, etcd-io/raft's "persist
// before you send"): what a Ready asks to be durable — a snapshot from the leader, the hard state
// and the new entries — written and synced, one write per Ready however many proposals it carries
// (group commit: proposal-queue.ts). A failed write is retried with backoff until it succeeds
// (log-fault.ts holds its state); the node is told when a fault starts and ends, and decides what
// that does to proposals, reads and its events.
import type { Ready } from '../core/types';
import type { Install } from './fsm-apply';
import type { LogFault } from './log-fault';
import type { ResolvedOptions } from './options';
import type { Snapshots } from './snapshots';
import type { StorageFault, StorageRecovery } from './storage-fault';

export interface LogWriterDeps {
  opts: ResolvedOptions;
  fault: LogFault;
  snapshots: Snapshots;
  stopped(): boolean;
  /** For the log lines: the core's role and term when the fault started. */
  where(): { role: string; term: number };
  /** A write failed and the fault starts (not at each retry). */
  faulted(fault: StorageFault): void;
  /** The write succeeded after a fault. */
  recovered(recovery: StorageRecovery): void;
  logError(o: object, msg: string): void;
}

export class LogWriter {
  constructor(private readonly deps: LogWriterDeps) {}

  /**
   * Writes what `ready` asks to be durable: true once it is, false if the node stopped first.
   * On failure the node is faulted (see StorageFault) and the same writes are retried with backoff;
   * the core is neither stepped nor ticked meanwhile, so nothing it says later can overtake them.
   * Retrying is safe: both writes are idempotent (a store that may hold half of a failed write, like
   * LevelDB, is reopened by the store itself before it writes again).
   */
  async persist(ready: Ready, install: Install | undefined): Promise<boolean> {
    const { opts, fault, snapshots } = this.deps;
    let snapshotSaved = ready.snapshot === undefined;
    let appended = ready.hardState === undefined && ready.entries.length === 0;
    for (;;) {
      try {
        if (!snapshotSaved) {
          // A snapshot of ours still being persisted is older: it is dropped, never written after this.
          snapshots.installing(install!.meta.index);
          // The core restarts its log at the snapshot (it keeps no suffix), so the stored log goes too
          // (a sink the pieces were written into was made compacting to Infinity; its commit may be retried).
          if (install!.sink) await install!.sink.commit();
          else await opts.storage.saveSnapshot(install!.meta, install!.data!, Infinity);
          snapshotSaved = true;
        }
        if (!appended) {
          await opts.storage.append(ready.hardState, ready.entries);
          appended = true;
        }
        if (fault.current) this.recovered();
        return !this.deps.stopped();
      } catch (err) {
        if (this.deps.stopped()) return false;
        await fault.waitRetry(this.failed(err));
        if (this.deps.stopped()) return false;
      }
    }
  }

  /** A Ready write failed: enter (or stay in) the fault; returns the delay before the next try. */
  private failed(err: unknown): number {
    const { opts } = this.deps;
    const { fault, started, delay, cause } = this.deps.fault.failed(err);
    if (!started) {
      opts.logger.debug({ id: opts.id, err: cause, retries: fault.retries, nextRetryMs: delay }, 'raft: storage still failing');
      return delay;
    }
    this.deps.logError(
      { id: opts.id, err: cause, ...this.deps.where() },
      'raft: storage failed; this server takes no part in Raft (no votes, appends, commits or applies) until the write succeeds — retrying',
    );
    this.deps.faulted(fault);
    return delay;
  }

  private recovered(): void {
    const { opts } = this.deps;
    const { recovery, lastError } = this.deps.fault.recovered(this.deps.where().term);
    opts.logger.info({ id: opts.id, downMs: recovery.downMs, retries: recovery.retries, lastError }, 'raft: storage recovered; taking part in Raft again');
    this.deps.recovered(recovery);
  }
}
