// The hard-state rule both on-disk storages follow: a change of term or vote is written (synced)
// with the append that carries it; one that only moves the commit index is not written on its own
// but rides with the next write, or close() (etcd's MustSync: a lost commit index is re-learned
// from the leader, and writing it alone cost every server one more sync per commit).
import type { HardState } from '../core/types';

export interface HardStatePlan {
  /** The hard state to write with this append (a deferred one, when this append brings none). */
  hard: HardState | undefined;
  /** The write failed: a deferred hard state it carried waits for the next write again. */
  failed(): void;
}

export class HardStateDeferral {
  private deferred: HardState | undefined;

  /**
   * What an append of `entries` entries with `hardState` must write, or null when nothing: its
   * commit-only change is kept for later. `written` is the term and vote last *written* (not merely
   * handed over): a term or vote whose write failed is never taken for a commit-only change on the
   * retry.
   */
  plan(hardState: HardState | undefined, entries: number, written: { term: number; vote: string | null }): HardStatePlan | null {
    const termOrVote = hardState !== undefined && (hardState.term !== written.term || hardState.vote !== written.vote);
    if (entries === 0 && !termOrVote) {
      if (hardState) this.deferred = hardState;
      return null;
    }
    // Hard states come in order: a newer one supersedes the deferred one.
    const hard = hardState ?? this.deferred;
    const carried = hardState === undefined ? hard : undefined;
    this.deferred = undefined;
    return {
      hard,
      failed: () => {
        if (carried && !this.deferred) this.deferred = carried;
      },
    };
  }

  /** The deferred hard state, if any, now to be written (close) or dropped; none is kept after. */
  take(): HardState | undefined {
    const hard = this.deferred;
    this.deferred = undefined;
    return hard;
  }
}
