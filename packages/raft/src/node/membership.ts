// Membership changes on the leader (hashicorp/raft's configuration changes: AddVoter, AddNonvoter,
// RemoveServer, and the promotion Consul's autopilot makes): one change at a time, each a log entry
// that the caller waits on until it is applied, and a learner promoted only once it has caught up.
// Also the handover of leadership to another voter (LeadershipTransfer).
import type { ConfChange } from '../core/configuration';
import type { RaftCore } from '../core/raft-core';
import type { NodeId, ServerInfo } from '../core/types';
import { NodeStoppedError, NotCaughtUpError, NotLeaderError } from '../interfaces';
import { monotonicMs } from '../monotonic-clock';
import type { PendingProposals } from './pending-proposals';

/** How far (entries) behind the leader's log a learner may be and still be promoted. */
const PROMOTE_MAX_LAG = 1_000;
/** How long a configuration change waits for the one before it to commit (change()). */
const CONF_CHANGE_WAIT_MS = 10_000;

export interface MembershipDeps {
  core: RaftCore;
  proposed: PendingProposals;
  stopped(): boolean;
  /** The error a storage fault answers with while it keeps this server out of Raft, or null. */
  storageFault(): Error | null;
  isLeader(): boolean;
  leader(): ServerInfo | null;
  learnAddresses(servers: ServerInfo[]): void;
  /** Follows the node's 'leader' event until the returned function is called. */
  onLeader(listener: (leader: ServerInfo | null) => void): () => void;
  /** Runs the driver's next turn (the change's entry is in the core's next Ready). */
  schedule(): void;
}

export class Membership {
  constructor(private readonly deps: MembershipDeps) {}

  /** Adds a voter, or a learner (non-voter) when `server.learner` is set. */
  async add(server: ServerInfo): Promise<void> {
    this.deps.learnAddresses([server]);
    await this.change({ type: server.learner ? 'addLearner' : 'add', server });
  }

  /**
   * Makes learner `id` a voter. Refused unless it is a learner that has acknowledged some of the log
   * and caught up to within PROMOTE_MAX_LAG entries of the leader's: a voter that is far behind cannot help commit
   * until it has caught up, and with it the quorum grows (Consul's autopilot promotes only
   * healthy, caught-up non-voters for the same reason).
   */
  async promote(id: NodeId): Promise<void> {
    const { core } = this.deps;
    const server = core.configuration.servers.find((s) => s.id === id);
    if (!server) throw new Error(`no server ${id} in the configuration`);
    if (!server.learner) throw new Error(`server ${id} is already a voter`);
    if (!this.deps.isLeader()) throw new NotLeaderError(this.deps.leader());
    const match = core.matchOf(id);
    // Never acknowledged anything (match 0): not caught up however young the log is — a learner that
    // does not answer must not become a voter the quorum waits for.
    if (match === 0 || match + PROMOTE_MAX_LAG < core.lastIndex) {
      throw new NotCaughtUpError(`server ${id} has not caught up yet (at ${match} of ${core.lastIndex})`);
    }
    await this.change({ type: 'add', server: { id: server.id, address: server.address } });
  }

  async remove(id: NodeId): Promise<void> {
    const server = this.deps.core.configuration.servers.find((s) => s.id === id);
    if (!server) return;
    await this.change({ type: 'remove', server });
  }

  /** Hands leadership to `to` (or the most caught-up follower); resolves when another server leads. */
  transfer(to: NodeId | undefined, timeoutMs: number): Promise<void> {
    const { core } = this.deps;
    const faulted = this.deps.storageFault();
    if (faulted) return Promise.reject(faulted);
    if (!this.deps.isLeader()) return Promise.reject(new NotLeaderError(this.deps.leader()));
    if (core.configuration.servers.every((s) => s.id === core.id || s.learner)) {
      return Promise.reject(new Error('no other voter to transfer leadership to'));
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        stopFollowing();
        reject(new Error(`leadership transfer did not complete within ${timeoutMs} ms`));
      }, timeoutMs);
      const stopFollowing = this.deps.onLeader((leader) => {
        if (leader && leader.id !== core.id) {
          clearTimeout(timer);
          stopFollowing();
          resolve();
        }
      });
      core.transferLeadership(to);
      this.deps.schedule();
    });
  }

  private async change(change: ConfChange): Promise<void> {
    const { core } = this.deps;
    if (this.deps.stopped()) throw new NodeStoppedError();
    const faulted = this.deps.storageFault();
    if (faulted) throw faulted;
    if (!this.deps.isLeader()) throw new NotLeaderError(this.deps.leader());
    // One change at a time: a change asked for while the previous one (or the new leader's first
    // entry, or a handover) is uncommitted waits for it, as hashicorp/raft's configuration channel
    // does, rather than failing (a removal asked for right after an election answered 500; CI).
    const waitUntil = monotonicMs() + CONF_CHANGE_WAIT_MS;
    let at = core.proposeConfChange(change);
    while (!at && core.confChangeWaiting && monotonicMs() < waitUntil) {
      await new Promise((r) => setTimeout(r, 20));
      if (this.deps.stopped()) throw new NodeStoppedError();
      at = core.proposeConfChange(change);
    }
    if (!at) {
      if (core.role !== 'leader') throw new NotLeaderError(this.deps.leader());
      throw new Error('a configuration change is already in progress (or leadership is being transferred)');
    }
    const done = new Promise<unknown>((resolve, reject) => this.deps.proposed.add(at.index, at.term, resolve, reject));
    this.deps.schedule();
    await done;
  }
}
