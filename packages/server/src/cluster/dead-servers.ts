// Autopilot's dead server cleanup (Consul's CleanupDeadServers, default true; autopilot.go
// pruneDeadServers): the leader removes servers that have failed from the Raft configuration, but
// only while the ones it removes are a minority of the voters — `failed < voters / 2` in Go's
// integer division. So in a cluster of three a dead server stays (1 < 1 fails: removing it would
// leave no room for another failure) until a replacement joins and makes four (1 < 2), when it is
// removed; with five, one dead server is removed at once. "Failed" is the leader's own view: every
// ping for FAILED_FOR_MS has gone unanswered (server-health.ts), about what serf takes to declare a
// member failed. A removed server is not marked as left: should it come back, it is added back
// (readmission.ts), as Consul re-adds a reaped member that rejoins.
import type { RaftNode } from '@registry/raft';
import type { Store } from '@registry/store';
import type { Logger } from '../runtime/logger';

/** How long a server must have answered no ping before autopilot counts it failed. */
export const FAILED_FOR_MS = 5_000;

export interface DeadServersDeps {
  selfId: string;
  raft: RaftNode;
  store: Store;
  logger: Logger;
  /** ms since server `id` stopped answering the leader's pings, undefined while it answers. */
  unansweredForMs(id: string): number | undefined;
}

export class DeadServerCleanup {
  private lastRefusal = '';

  constructor(private readonly d: DeadServersDeps) {}

  async pass(): Promise<void> {
    const { raft, store, selfId } = this.d;
    if (!store.autopilotConfig().value.CleanupDeadServers) return;
    const servers = raft.configuration();
    const failed = servers.filter((s) => s.id !== selfId && (this.d.unansweredForMs(s.id) ?? 0) >= FAILED_FOR_MS);
    if (failed.length === 0) return;
    const voters = servers.filter((s) => !s.learner).length;
    if (!(failed.length < Math.floor(voters / 2))) {
      const why = `${failed.length}/${voters}`;
      if (why !== this.lastRefusal) this.d.logger.debug({ failed: failed.map((s) => s.address), voters }, 'autopilot: not removing dead servers: too many dead servers');
      this.lastRefusal = why;
      return;
    }
    this.lastRefusal = '';
    for (const s of failed) {
      if (!raft.isLeader()) return;
      this.d.logger.info({ id: s.id, address: s.address }, 'autopilot: removing a failed server (CleanupDeadServers)');
      await raft.removeServer(s.id);
    }
  }
}
