// Everything ReadIndex (Raft thesis §6.4) keeps between steps, in one place
// (etcd-io/raft's read_only.go, plus the follower's side).
//
// Leader: a read may be served at the commit index it found on arrival once the
// leader has proven it still leads — a heartbeat round sent after the read was
// queued, acknowledged by a majority. Reads queued between two Readies share one
// round; a round's number travels as the heartbeat's ctx.
//
// Follower: a read is forwarded to the leader and waits for its answer; it fails
// when the leader changes (the new one will not answer) or after a timeout.
import type { NodeId } from './types';

export interface PendingRead {
  ctx: number;
  /** The server that asked: the leader itself or a follower that forwarded it. */
  from: NodeId;
  /** The leader's commit index when the read arrived. */
  index: number;
  /** The heartbeat round that must reach a majority before the read is safe. */
  round: number;
}

/** A forwarded read that has not come back within this many election timeouts fails. */
export const FORWARDED_READ_TIMEOUTS = 2;

/** The leader's reads waiting for their heartbeat round, and each follower's latest acknowledged round. */
export class ReadOnly {
  private reads: PendingRead[] = [];
  /** The last round started. Rounds only grow, so acknowledging round r confirms every round ≤ r. */
  private round = 0;
  /** A queued read waits for a round that has not been started yet. */
  private wanted = false;
  private acks = new Map<NodeId, number>();

  get roundWanted(): boolean {
    return this.wanted;
  }

  /** Queues a read at `index`; it waits for the next round, which the next Ready starts. */
  add(ctx: number, from: NodeId, index: number): void {
    this.reads.push({ ctx, from, index, round: this.round + 1 });
    this.wanted = true;
  }

  /** Starts the round the queued reads wait for; returns its number (the heartbeat's ctx). */
  startRound(): number {
    this.wanted = false;
    return ++this.round;
  }

  /** `from` answered the heartbeat of `round`; false when that tells nothing new. */
  recvAck(from: NodeId, round: number): boolean {
    if (round <= this.ackedRound(from)) return false;
    this.acks.set(from, round);
    return true;
  }

  ackedRound(id: NodeId): number {
    return this.acks.get(id) ?? 0;
  }

  /** `id` is no longer a voter: its acknowledgements must not count if it comes back. */
  forget(id: NodeId): void {
    this.acks.delete(id);
  }

  /** Removes and returns the reads, oldest first, whose round `isConfirmed` (by a majority). */
  release(isConfirmed: (round: number) => boolean): PendingRead[] {
    let n = 0;
    while (n < this.reads.length && isConfirmed(this.reads[n].round)) n++;
    return n === 0 ? [] : this.reads.splice(0, n);
  }

  /** Leadership is lost: returns every pending read (they fail) and forgets the acknowledgements. */
  reset(): PendingRead[] {
    const all = this.reads;
    this.reads = [];
    this.wanted = false;
    this.acks.clear();
    return all;
  }
}

/** A follower's reads forwarded to the leader, by ctx, with the tick each one left at. */
export class ForwardedReads {
  private readonly sentAt = new Map<number, number>();

  add(ctx: number, now: number): void {
    this.sentAt.set(ctx, now);
  }

  /** The leader answered `ctx`; false when we no longer wait for it (it expired or failed). */
  answered(ctx: number): boolean {
    return this.sentAt.delete(ctx);
  }

  /** Removes and returns the reads out for FORWARDED_READ_TIMEOUTS election timeouts. */
  expire(now: number, electionTicks: number): number[] {
    const limit = FORWARDED_READ_TIMEOUTS * electionTicks;
    const expired: number[] = [];
    for (const [ctx, sentAt] of this.sentAt) {
      if (now - sentAt >= limit) {
        this.sentAt.delete(ctx);
        expired.push(ctx);
      }
    }
    return expired;
  }

  /** Removes and returns every read (the leader changed, and the new one will not answer the old one's). */
  takeAll(): number[] {
    const all = [...this.sentAt.keys()];
    this.sentAt.clear();
    return all;
  }
}
