// What a leader knows about one follower's log, and the flow control that
// decides when it may send the next append (etcd-io/raft's tracker, in small).
import type { NodeId } from './types';

/**
 * probe: one append at a time until the follower's match point is found;
 * replicate: stream appends optimistically, no more unacknowledged than the InflightLimits allow;
 * snapshot: the follower needs a snapshot; nothing else is sent until it answers.
 */
export type ProgressState = 'probe' | 'replicate' | 'snapshot';

/**
 * How much a leader may have sent one follower and not yet heard back about. The count keeps the
 * pipeline short; the bytes keep a follower that is far behind (a wiped disk replaying a long log
 * tail) from making the leader encode and queue hundreds of MiB of appends at once — each append is
 * a copy of its entries until the socket has written it (etcd-io/raft's MaxInflightBytes).
 */
export interface InflightLimits {
  count: number;
  /** Entry payload bytes; the append that crosses the limit still goes, the next one waits. */
  bytes: number;
}

/** Appends sent in replicate state and not yet acknowledged, oldest first: last index and payload bytes. */
export class Inflights {
  private readonly lastIndexes: number[] = [];
  private readonly sizes: number[] = [];
  private _bytes = 0;

  constructor(private readonly limits: InflightLimits) {}

  get count(): number {
    return this.lastIndexes.length;
  }

  get full(): boolean {
    return this.lastIndexes.length >= this.limits.count || this._bytes >= this.limits.bytes;
  }

  add(lastIndex: number, bytes: number): void {
    this.lastIndexes.push(lastIndex);
    this.sizes.push(bytes);
    this._bytes += bytes;
  }

  /** An acknowledgement up to `index` frees every append that ended at or before it. */
  freeUpTo(index: number): void {
    let n = 0;
    while (n < this.lastIndexes.length && this.lastIndexes[n] <= index) this._bytes -= this.sizes[n++];
    if (n > 0) {
      this.lastIndexes.splice(0, n);
      this.sizes.splice(0, n);
    }
  }

  /** A heartbeat answer proves the link works; let one more append out (its predecessor may be lost). */
  freeFirst(): void {
    if (this.lastIndexes.length === 0) return;
    this.lastIndexes.shift();
    this._bytes -= this.sizes.shift()!;
  }

  reset(): void {
    this.lastIndexes.length = 0;
    this.sizes.length = 0;
    this._bytes = 0;
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
    limits: InflightLimits,
  ) {
    this.next = next;
    this.inflights = new Inflights({ count: Math.max(1, limits.count), bytes: Math.max(1, limits.bytes) });
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

  /** Records an append of entries ending at `lastIndex` (none when lastIndex is undefined) carrying `bytes` of payload. */
  sent(lastIndex: number | undefined, bytes = 0): void {
    if (this.state === 'replicate') {
      if (lastIndex !== undefined) {
        this.next = lastIndex + 1;
        this.inflights.add(lastIndex, bytes);
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
