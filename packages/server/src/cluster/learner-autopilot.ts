// The leader promotes caught-up non-voters on its own, as Consul's autopilot promotes non-voters
// once they are stable (raft protocol 3). A new server comes in as a Raft learner (join.ts `onJoin`,
// `Cluster.AddServer` for `registry join` run on a member) and normally asks until it is a voter;
// but a learner that never asks — one added by `registry join` on another server, or a server of
// an older version that stops asking once it is in — would otherwise stay a non-voter for good.
//
// Each pass (server-health.ts runs one a second, after its pings) asks every learner over the
// server port (`cluster.info`) what it declares itself. One that answers, as the server this id
// names, without `-non-voter`, without a Raft storage fault and without leaving, is promoted if
// it has caught up (promote-caught-up.ts: RaftNode.promote's rule, the one onJoin uses). A learner
// that does not answer is left alone: promoting it would add a voter the quorum waits for, the
// liveness bug learners exist to avoid. A `-non-voter` server stays a learner; only an operator
// promotes it (raft-promote.ts). One promotion per pass: configuration changes go one at a time.
import { NotLeaderError, type RaftNode, type ServerInfo, type Transport } from '@registry/raft';
import type { Logger } from '../runtime/logger';
import { promoteIfCaughtUp } from './promote-caught-up';
import type { InfoReply } from './server-info';

/** Below the pass interval, so a silent learner never delays the next pass much. */
const ASK_TIMEOUT_MS = 800;

export interface LearnerAutopilotDeps {
  selfId: string;
  raft: RaftNode;
  transport: Transport;
  logger: Logger;
}

export class LearnerAutopilot {
  constructor(private readonly d: LearnerAutopilotDeps) {}

  /** One pass: promote the first learner that wants to vote and has caught up. */
  async pass(): Promise<void> {
    const { raft } = this.d;
    if (!raft.isLeader()) return;
    const learners = raft.configuration().filter((s) => s.learner && s.id !== this.d.selfId);
    if (learners.length === 0) return;
    const wanting = await Promise.all(learners.map(async (s) => ((await this.wantsToVote(s)) ? s : null)));
    for (const server of wanting) {
      if (!server) continue;
      // The asking took a while: still the leader, and it is still a learner at that address.
      if (!raft.isLeader()) return;
      if (!raft.configuration().some((s) => s.id === server.id && s.learner && s.address === server.address)) continue;
      try {
        if (!(await promoteIfCaughtUp(raft, server.id))) continue;
      } catch (err) {
        if (err instanceof NotLeaderError) return;
        throw err;
      }
      this.d.logger.info({ id: server.id, address: server.address }, 'autopilot: promoted a caught-up non-voter to a voter');
      return;
    }
  }

  /** Whether `server` answers as itself and does not declare itself a non-voter; false when it does not answer. */
  private async wantsToVote(server: ServerInfo): Promise<boolean> {
    const member = { leader: this.d.selfId, term: this.d.raft.term() };
    let reply: InfoReply;
    try {
      reply = (await this.d.transport.call(server.address, 'cluster.info', { member }, ASK_TIMEOUT_MS)) as InfoReply;
    } catch {
      return false;
    }
    return reply?.id === server.id && reply.nonVoter !== true && !reply.storageFault && reply.left !== true;
  }
}
