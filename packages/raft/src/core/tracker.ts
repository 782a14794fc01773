// The leader's and the candidate's view of the other voters (etcd-io/raft's
// tracker package): one Progress per follower, the votes of the current
// election, and the quorum questions asked of them — what is committed, who
// won, is the leader still in touch. The arithmetic is in quorum.ts, one
// follower's flow control in progress.ts.
//
// Voters are read through `voters()` at every question rather than cached: the
// latest configuration changes whenever a Config entry is appended or truncated
// (it is in force as soon as it is in the log, Raft thesis §4.1).
//
// Learners (etcd's tracker keeps them in `Learners` beside `Voters`): the leader tracks their
// progress like a voter's, so they receive the log, heartbeats and snapshots, but every quorum
// question below asks only the voters, and a learner is never a leadership-transfer target.
import { Progress, type InflightLimits } from './progress';
import { hasQuorum, quorumIndex, voteOutcome, type VoteOutcome } from './quorum';
import type { NodeId } from './types';

export class ProgressTracker {
  /** The other members (voters and learners), leader only (empty in every other role). */
  private progress = new Map<NodeId, Progress>();
  private votes = new Map<NodeId, boolean>();

  constructor(
    private readonly self: NodeId,
    private readonly voters: () => NodeId[],
    /** Voters and learners: everyone the leader replicates to. */
    private readonly members: () => NodeId[],
    private readonly inflightLimits: InflightLimits,
  ) {}

  // ---------------------------------------------------------------- progress

  get(id: NodeId): Progress | undefined {
    return this.progress.get(id);
  }

  /** Every follower's progress, in the order they were first tracked. */
  followers(): IterableIterator<Progress> {
    return this.progress.values();
  }

  /** Forgets every follower: each leadership starts from scratch, and a lost one leaves nothing behind. */
  reset(): void {
    this.progress = new Map();
  }

  /**
   * Tracks exactly the other members (voters and learners) of the latest configuration: a new
   * one starts probing at `next`, an existing one keeps its state (a learner promoted to voter
   * keeps its match). Returns the ids no longer tracked.
   */
  sync(next: number): NodeId[] {
    const others = this.members().filter((id) => id !== this.self);
    for (const id of others) {
      if (!this.progress.has(id)) this.progress.set(id, new Progress(id, next, this.inflightLimits));
    }
    const removed: NodeId[] = [];
    for (const id of [...this.progress.keys()]) {
      if (!others.includes(id)) {
        this.progress.delete(id);
        removed.push(id);
      }
    }
    return removed;
  }

  /** The voting follower with the highest match index (the first tracked wins a tie); learners cannot lead. */
  mostUpToDate(): NodeId | undefined {
    const voters = new Set(this.voters());
    let best: Progress | undefined;
    for (const pr of this.progress.values()) if (voters.has(pr.id) && (!best || pr.match > best.match)) best = pr;
    return best?.id;
  }

  isVoter(id: NodeId): boolean {
    return this.voters().includes(id);
  }

  // ---------------------------------------------------------------- quorum questions

  /** Do a majority of the voters agree? */
  hasQuorum(agrees: (id: NodeId) => boolean): boolean {
    return hasQuorum(this.voters(), agrees);
  }

  /**
   * The highest index a majority of voters holds. The leader's own log counts only up to
   * `selfMatch`, what its driver confirmed persisted, so it may send before its own write ends.
   */
  committed(selfMatch: number): number {
    return quorumIndex(this.voters(), (id) => (id === this.self ? selfMatch : (this.progress.get(id)?.match ?? 0)));
  }

  /** Check-quorum: has a majority (the leader included) been heard from since the last reset? */
  quorumActive(): boolean {
    return this.hasQuorum((id) => id === this.self || this.progress.get(id)?.recentActive === true);
  }

  /** Starts a new check-quorum period. */
  resetRecentActive(): void {
    for (const pr of this.progress.values()) pr.recentActive = false;
  }

  // ---------------------------------------------------------------- votes

  resetVotes(): void {
    this.votes = new Map();
  }

  /** Only a voter's first answer in an election counts; a duplicate cannot flip it. */
  recordVote(id: NodeId, granted: boolean): void {
    if (!this.votes.has(id)) this.votes.set(id, granted);
  }

  tallyVotes(): VoteOutcome {
    return voteOutcome(this.voters(), this.votes);
  }
}
