// The state of a failed Ready write (a 'log' storage fault, storage-fault.ts): what failed and
// since when, the retry schedule and the wait before the next try, and the leader heard of
// meanwhile. The driver (raft-node.ts) decides what a fault does to proposals, reads and events;
// this holds what it must remember across the retries, and what is left once the write succeeds —
// a newer leader heard during the fault, which our core has not yet learnt of.
import type { NodeId } from '../core/types';
import { monotonicMs } from '../monotonic-clock';
import { Backoff, describeStorageError, type StorageFault, type StorageRecovery } from './storage-fault';

/** Retries of a failed Ready write: 100 ms, doubling, at most 2 s. */
const LOG_RETRY = { firstMs: 100, maxMs: 2_000 };

export class LogFault {
  /** Set while a failed write's retries go on (the node does not take part in Raft meanwhile). */
  private fault: StorageFault | null = null;
  private readonly backoff = new Backoff(LOG_RETRY.firstMs, LOG_RETRY.maxMs);
  /** Cuts short the wait before the next retry (stop() uses it). */
  private wakeRetry: (() => void) | null = null;
  /** While faulted: the server that last sent us leader traffic of our term or newer (for leader()). */
  private leaderHint: NodeId | null = null;
  private leaderHintTerm = 0;
  /**
   * A leader of a newer term heard of while faulted: until our core catches up with that term (the
   * first message it steps after recovery does it), a core that still leads is a deposed leader
   * and must not be reported as leading.
   */
  private newerLeader: { id: NodeId; term: number } | null = null;

  /** The fault going on, or null. */
  get current(): StorageFault | null {
    return this.fault;
  }

  /**
   * A write failed: the fault it starts (`started`), or the one it continues with its counts
   * updated (`started` false), and the delay before the next try.
   */
  failed(err: unknown): { fault: StorageFault; started: boolean; delay: number; cause: string } {
    const cause = describeStorageError(err);
    const delay = this.backoff.take();
    const now = monotonicMs();
    if (this.fault) {
      this.fault.retries++;
      this.fault.lastError = cause;
      this.fault.nextRetryAt = now + delay;
      return { fault: this.fault, started: false, delay, cause };
    }
    this.fault = { kind: 'log', message: `raft storage failed: ${cause}`, since: now, retries: 0, lastError: cause, nextRetryAt: now + delay };
    this.leaderHint = null;
    this.leaderHintTerm = 0;
    return { fault: this.fault, started: true, delay, cause };
  }

  /** Resolves after `delay` ms, or at once when wake() is called. */
  async waitRetry(delay: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delay);
      this.wakeRetry = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wakeRetry = null;
  }

  wake(): void {
    this.wakeRetry?.();
  }

  /** The write succeeded: the fault that ended, and its last error. A newer leader heard meanwhile is kept (superseding()). */
  recovered(coreTerm: number): { recovery: StorageRecovery; lastError: string } {
    const fault = this.fault!;
    this.fault = null;
    if (this.leaderHint !== null && this.leaderHintTerm > coreTerm) this.newerLeader = { id: this.leaderHint, term: this.leaderHintTerm };
    this.leaderHint = null;
    this.leaderHintTerm = 0;
    this.backoff.reset();
    return { recovery: { kind: 'log', message: fault.message, since: fault.since, retries: fault.retries, downMs: monotonicMs() - fault.since }, lastError: fault.lastError };
  }

  /**
   * While faulted, leader traffic of `term` from `from` arrived (and was dropped): true when the
   * hinted leader changed (the driver announces it).
   */
  heardLeader(from: NodeId, term: number, coreTerm: number): boolean {
    if (term < Math.max(coreTerm, this.leaderHintTerm)) return false;
    this.leaderHintTerm = term;
    if (from === this.leaderHint) return false;
    this.leaderHint = from;
    return true;
  }

  /** While faulted: the leader to point requests at (never this server), else undefined. */
  faultedLeader(coreLeader: NodeId | null, self: NodeId): NodeId | null {
    return this.leaderHint ?? (coreLeader === self ? null : coreLeader);
  }

  /** The newer leader heard during a fault, while our core (at `coreTerm`) has not yet learnt of its term. */
  superseding(coreTerm: number): NodeId | null {
    if (this.newerLeader === null) return null;
    if (coreTerm >= this.newerLeader.term) this.newerLeader = null;
    return this.newerLeader?.id ?? null;
  }
}
