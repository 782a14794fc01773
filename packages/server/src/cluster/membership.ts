// Whether this server is a member of its cluster, as far as it can tell (issue #35, finding 3).
// Its own Raft configuration is not enough: the leader stops replicating to a server as soon as it
// appends that server's removal, so a follower removed with `operator raft remove-peer` never sees
// the entry and its log names it a voter for good. What tells it instead:
//   - the leader, on contact: the leader's reconciliation (readmission.ts) pings every server of the
//     catalog that is not in its configuration with a RemovalNotice (and adds it back unless it left);
//   - its own configuration, when it did receive the entry (a leader that removed itself);
//   - `leave` (from its start on) and the left marker on disk (left-marker.ts; also written when
//     the leader says this server was force-left).
// While out, requests that need the cluster fail at once with the reason (rpc/rpc.ts refuses them
// through `reason()`) instead of waiting out the 7 s leader wait for a leader that never comes.
// It is a member again once a leader appends to its log after the notice (a leader replicates only
// to members: the one that took it back), or once it joined through a leader itself.
import type { RaftNode } from '@registry/raft';
import type { Logger } from '../runtime/logger';
import type { LeftMarker } from './left-marker';

/** What the leader tells a server that its configuration does not hold (`cluster.info` body). */
export interface RemovalNotice {
  /** The leader's id and term: a notice from an older term than this server's is a deposed leader's, and ignored. */
  leader: string;
  term: number;
  /** It left (`leave`) or was force-left: the leader will not add it back on its own. */
  left: boolean;
  /** The server the leader means (absent from older leaders): another server at its address ignores the notice. */
  id?: string;
}

export class Membership {
  /** The last notice, and this server's last log index when it came. */
  private removed: { notice: RemovalNotice; lastIndex: number } | null = null;
  /** The last log index when the left marker was found or written: entries past it come from a leader that took it back. */
  private leftAt: number | null;
  private leaving = false;
  /** The left marker's state, read once: reason() runs on every request and must not touch the disk. */
  private leftOnDisk: boolean;

  constructor(
    private readonly raft: RaftNode,
    private readonly selfId: string,
    private readonly marker: LeftMarker,
    private readonly logger: Logger,
  ) {
    this.leftOnDisk = marker.has();
    this.leftAt = this.leftOnDisk ? raft.lastIndex() : null;
    raft.on('applied', () => this.checkTakenBack());
  }

  /** The leader says its configuration does not hold this server. */
  noticed(notice: RemovalNotice): void {
    if (typeof notice?.term !== 'number' || notice.term < this.raft.term() || this.raft.isLeader()) return;
    if (notice.id !== undefined && notice.id !== this.selfId) return;
    if (!this.removed) {
      this.logger.warn({ leader: notice.leader, term: notice.term, left: notice.left }, notice.left
        ? 'the leader says this server left the cluster (leave or force-leave): it stays out until it joins again'
        : 'the leader says this server was removed from the Raft configuration: waiting to be added back');
    }
    this.removed = { notice, lastIndex: this.raft.lastIndex() };
    if (notice.left && !this.leftOnDisk) {
      this.marker.mark();
      this.leftOnDisk = true;
      this.leftAt = this.raft.lastIndex();
    }
  }

  /**
   * The leader pinged this server as a member of its configuration (server-health.ts). A notice
   * that crossed a re-add (the leader's reconciliation and a `join` racing) would otherwise keep this
   * server refusing requests until the next entry reaches it, which in a quiet cluster may be never.
   * A leader of an older term than this server's says nothing; a leave under way stays under way.
   */
  confirmed(leader: { leader: string; term: number }): void {
    if (typeof leader?.term !== 'number' || leader.term < this.raft.term() || this.leaving) return;
    if (!this.removed && !this.leftOnDisk) return;
    if (this.removed && leader.term < this.removed.notice.term) return;
    this.logger.info({ leader: leader.leader, term: leader.term }, 'the leader counts this server a member again');
    this.rejoined();
  }

  /** `leave` has begun: from now on this server asks not to be added back. */
  startLeaving(): void {
    this.leaving = true;
  }

  /** The leave did not complete: this server is still a member as far as anyone knows. */
  leaveAbandoned(): void {
    this.leaving = false;
  }

  /** Whether this server has left (and so must not be added back by the leader on its own). */
  hasLeft(): boolean {
    return this.leaving || this.leftOnDisk;
  }

  /** Out of its cluster: left, told it was removed, or its own configuration (non-empty) lacks it. */
  isOut(): boolean {
    return this.reason() !== null;
  }

  /** Why this server is not a member, or null while it is one (or has not joined any cluster yet). */
  reason(): string | null {
    // The common case, on every request: a member that hears from its leader.
    if (!this.removed && !this.leftOnDisk && !this.leaving && this.raft.leader() !== null) return null;
    this.checkTakenBack();
    if (this.hasLeft()) return 'this server has left the cluster (leave or force-leave); join it again to return (registry join <server>)';
    if (this.removed) {
      return `this server was removed from the cluster's Raft configuration (told by the leader ${this.removed.notice.leader} in term ${this.removed.notice.term}); the leader adds a live server back within seconds, or join it again`;
    }
    const servers = this.raft.configuration();
    if (servers.length > 0 && !servers.some((s) => s.id === this.selfId)) return "this server is not in its cluster's Raft configuration (it was removed)";
    return null;
  }

  /** Joined again through a leader that committed it (cluster/join.ts): a member again. */
  rejoined(): void {
    if (this.leftOnDisk) this.marker.clear();
    this.leftOnDisk = false;
    this.leftAt = null;
    this.removed = null;
    this.leaving = false;
  }

  /** A leader appended past the notice (or the left marker) and the configuration holds this server: taken back. */
  private checkTakenBack(): void {
    if (!this.removed && this.leftAt === null) return;
    const since = Math.max(this.removed?.lastIndex ?? -1, this.leftAt ?? -1);
    if (this.leaving || this.raft.lastIndex() <= since || !this.raft.configuration().some((s) => s.id === this.selfId)) return;
    this.logger.info({ lastIndex: this.raft.lastIndex() }, 'this server is a member of the cluster again');
    this.rejoined();
  }
}
