// What a RaftNode counts and measures about its own work: the counters in stats(), the commit time
// of each proposal batch and the apply time of each Ready (told to the RaftObserver, observer.ts),
// and, on the leader, when each follower last answered (followerLastContact: Consul's
// autopilot LastContact). hashicorp/raft keeps the same beside its loops as go-metrics calls.
import type { NodeId, ServerInfo } from '../core/types';
import { monotonicMs } from '../monotonic-clock';
import type { RaftObserver } from './observer';

/** Proposal batches remembered for their commit time, at most (a leader whose commits stall). */
const MAX_UNCOMMITTED_BATCHES = 4096;

export class NodeMetrics {
  readonly counters = { readies: 0, appendedEntries: 0, appliedEntries: 0, snapshotsTaken: 0, snapshotsInstalled: 0 };
  /** Leader, with an observer: proposal batches not yet committed (last index, when handed to the core, size). */
  private readonly uncommittedBatches: { last: number; at: number; entries: number }[] = [];
  /** Leader: when each follower last answered an append or heartbeat of this term (monotonicMs()). */
  private readonly followerAnswers = new Map<NodeId, number>();

  constructor(private readonly observer: RaftObserver) {}

  /** A new term of leadership (or none) starts without the previous term's answers and batches. */
  roleChanged(): void {
    this.followerAnswers.clear();
    this.uncommittedBatches.length = 0;
  }

  /**
   * A batch of proposals was handed to the core, the last at `lastIndex`. One record per batch
   * (not per proposal) keeps measuring commit time off the per-write path.
   */
  proposed(lastIndex: number, entries: number): void {
    if (this.observer.committed && entries > 0 && this.uncommittedBatches.length < MAX_UNCOMMITTED_BATCHES) {
      this.uncommittedBatches.push({ last: lastIndex, at: monotonicMs(), entries });
    }
  }

  /** Leader: `from` answered an append or heartbeat of this term. */
  followerAnswered(from: NodeId): void {
    this.followerAnswers.set(from, monotonicMs());
  }

  /** Runs `apply` over a Ready's committed entries (through `lastIndex`), timing it for the observer. */
  async applying(lastIndex: number, entries: number, apply: () => Promise<number>): Promise<void> {
    if (this.uncommittedBatches.length > 0) this.batchesCommitted(lastIndex, monotonicMs());
    const busyMs = await apply();
    this.observer.applied?.(entries, busyMs);
  }

  /** How long ago (ms) each of `servers` other than `self` last answered (Infinity: not yet). */
  followerLastContact(servers: readonly ServerInfo[], self: NodeId): { id: NodeId; address: string; ms: number }[] {
    const now = monotonicMs();
    return servers
      .filter((s) => s.id !== self)
      .map((s) => {
        const at = this.followerAnswers.get(s.id);
        return { id: s.id, address: s.address, ms: at === undefined ? Infinity : now - at };
      });
  }

  /** Tell the observer about every proposal batch committed through `index` (leader only). */
  private batchesCommitted(index: number, now: number): void {
    let done = 0;
    while (done < this.uncommittedBatches.length && this.uncommittedBatches[done].last <= index) {
      const b = this.uncommittedBatches[done++];
      this.observer.committed?.(b.entries, now - b.at);
    }
    if (done > 0) this.uncommittedBatches.splice(0, done);
  }
}
