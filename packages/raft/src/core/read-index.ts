// ReadIndex requests a leader is confirming (Raft thesis §6.4). Each request
// remembers the commit index when it arrived and the heartbeat round that must
// reach a quorum before it is safe; many requests share one round.
import type { NodeId } from './types';

export interface PendingRead {
  ctx: number;
  /** The server that asked: the leader itself or a follower that forwarded it. */
  from: NodeId;
  index: number;
  round: number;
}

export class PendingReads {
  private reads: PendingRead[] = [];

  get size(): number {
    return this.reads.length;
  }

  add(read: PendingRead): void {
    this.reads.push(read);
  }

  /**
   * Removes and returns the reads whose round a quorum has acknowledged. Rounds only grow,
   * so an acknowledgement of round r confirms every read waiting on a round ≤ r.
   */
  release(isConfirmed: (round: number) => boolean): PendingRead[] {
    let n = 0;
    while (n < this.reads.length && isConfirmed(this.reads[n].round)) n++;
    return n === 0 ? [] : this.reads.splice(0, n);
  }

  takeAll(): PendingRead[] {
    const all = this.reads;
    this.reads = [];
    return all;
  }
}
