// What a leader knows about one follower's log, and the flow control that
// decides when it may send the next append (etcd-io/raft's tracker, in small).
import type { NodeId } from './types';

/**
 * probe: one append at a time until the follower's match point is found;
 * replicate: stream appends optimistically, at most `maxInflight` unacknowledged;
 * snapshot: the follower needs a snapshot; nothing else is sent until it answers.
 */
export type ProgressState = 'probe' | 'replicate' | 'snapshot';

/** Last indexes of appends sent in replicate state and not yet acknowledged, oldest first. */
export class Inflights {
  private readonly lastIndexes: number[] = [];

  constructor(private readonly capacity: number) {}

  get count(): number {
    return this.lastIndexes.length;
  }

  get full(): boolean {
    return this.lastIndexes.length >= this.capacity;
  }

  add(lastIndex: number): void {
    this.lastIndexes.push(lastIndex);
  }

  /** An acknowledgement up to `index` frees every append that ended at or before it. */
  freeUpTo(index: number): void {
    let n = 0;
    while (n < this.lastIndexes.length && this.lastIndexes[n] <= index) n++;
    if (n > 0) this.lastIndexes.splice(0, n);
  }

  /** A heartbeat answer proves the link works; let one more append out (its predecessor may be lost). */
  freeFirst(): void {
    this.lastIndexes.shift();
  }

  reset(): void {
    this.lastIndexes.length = 0;
  }
}

export class Progress {
  match = 0;
  /**
   * The leader's send stamp (Message `seq`) when `match` was last set: the answer to any message
   * stamped after it describes the follower's log as it was after the acknowledgement of `match`.
   */
  matchedAt = 0;
  next: number;
  state: ProgressState = 'probe';
  /** probe only: an append is out and unanswered. */
  probeSent = false;
  /** snapshot only: the index of the snapshot sent, and the tick it was sent at. */
  pendingSnapshot = 0;
  snapshotSentAt = 0;
  /** Heard from since the last check-quorum round. */
  recentActive = false;
  readonly inflights: Inflights;

  constructor(
    readonly id: NodeId,
    next: number,
    maxInflight: number,
  ) {
    this.next = next;
    this.inflights = new Inflights(Math.max(1, maxInflight));
  }

  get paused(): boolean {
    switch (this.state) {
      case 'probe':
        return this.probeSent;
      case 'replicate':
        return this.inflights.full;
      case 'snapshot':
        return true;
    }
  }

  becomeProbe(): void {
    // Coming back from a snapshot, the follower has at least the snapshot's index.
    this.next = this.state === 'snapshot' ? Math.max(this.match, this.pendingSnapshot) + 1 : this.match + 1;
    this.state = 'probe';
    this.probeSent = false;
    this.pendingSnapshot = 0;
    this.inflights.reset();
  }

  becomeReplicate(): void {
    this.state = 'replicate';
    this.next = this.match + 1;
    this.probeSent = false;
    this.inflights.reset();
  }

  becomeSnapshot(snapshotIndex: number, now: number): void {
    this.state = 'snapshot';
    this.pendingSnapshot = snapshotIndex;
    this.snapshotSentAt = now;
    this.next = snapshotIndex + 1;
    this.probeSent = false;
    this.inflights.reset();
  }

  /** Records an append of entries ending at `lastIndex` (none when lastIndex is undefined). */
  sent(lastIndex: number | undefined): void {
    if (this.state === 'replicate') {
      if (lastIndex !== undefined) {
        this.next = lastIndex + 1;
        this.inflights.add(lastIndex);
      }
    } else if (this.state === 'probe') {
      this.probeSent = true;
    }
  }

  /**
   * A successful answer up to `index`, `stamp` being the leader's latest send stamp; false when
   * it tells nothing new (duplicate or reordered).
   */
  acknowledge(index: number, stamp: number): boolean {
    let updated = false;
    if (index > this.match) {
      this.match = index;
      this.matchedAt = stamp;
      this.probeSent = false;
      updated = true;
    }
    this.next = Math.max(this.next, index + 1);
    return updated;
  }

  /**
   * A rejection of the append whose previous index was `rejected`; `hint` is where the
   * follower suggests retrying. False when the rejection is stale.
   */
  rejected(rejected: number, hint: number): boolean {
    if (this.state === 'replicate') {
      if (rejected <= this.match) return false;
      this.becomeProbe();
      this.next = Math.max(this.match + 1, Math.min(hint, rejected));
      return true;
    }
    // In snapshot state only the snapshot's answer (or a timeout) moves things on.
    if (this.state === 'snapshot' || this.next - 1 !== rejected) return false;
    const next = Math.max(this.match + 1, Math.min(hint, rejected));
    // A rejection of prevIndex = match: the follower acknowledged that entry since (a stale
    // rejection; a follower that lost its log is recognised by lostLog()). Resending the same
    // probe would only repeat it — and with duplicated messages multiply it.
    if (next === this.next) return false;
    this.next = next;
    this.probeSent = false;
    return true;
  }

  /**
   * The follower's log ends at `lastIndex`, below `match`, as a fresh answer shows (one to a
   * message stamped after `matchedAt`): it lost entries it had acknowledged — a wiped disk,
   * the server restarted with the same id (issue #16). Nothing it acknowledged can be relied on
   * any more: start over as for a new follower, probing from its real last index (a snapshot
   * follows if those entries are compacted). `stamp` is the leader's latest send stamp, so the
   * answers to what was sent before — this one's duplicates included — cannot do it again.
   */
  lostLog(lastIndex: number, stamp: number): void {
    this.state = 'probe';
    this.match = 0;
    this.matchedAt = stamp;
    this.next = lastIndex + 1;
    this.probeSent = false;
    this.pendingSnapshot = 0;
    this.inflights.reset();
  }
}
