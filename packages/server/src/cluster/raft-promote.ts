// `registry operator raft promote` / POST /v1/operator/raft/promote (issue #14): a non-voting server
// (a Raft learner, `-non-voter`) becomes a voter. It runs on the leader, which owns membership
// changes; they stay one at a time (the Raft core refuses a second while one is uncommitted).
import { NotCaughtUpError, NotLeaderError, type RaftNode } from '@registry/raft';
import { badRequest, serverError } from '../errors';
import type { LeaderCalls } from '../rpc/leader-calls';
import { peerOf } from './peer-lookup';

declare module '../rpc/leader-calls' {
  interface LeaderMethods {
    'Operator.PromotePeer': { args: { id?: string; address?: string }; reply: boolean };
  }
}

/** Serves the promote call on whichever server leads. */
export function installRaftPromote(raft: RaftNode, leaderCalls: LeaderCalls): void {
  leaderCalls.handle('Operator.PromotePeer', async (by) => {
    const server = peerOf(raft, by);
    if (!server.learner) throw badRequest(`server ${by.id ?? by.address} is already a voter`);
    try {
      await raft.promote(server.id);
    } catch (err) {
      if (err instanceof NotLeaderError) throw err; // found again and retried by LeaderCalls
      const message = (err as Error).message;
      // Not caught up: the operator's request is premature (retry later); anything else is ours.
      if (err instanceof NotCaughtUpError) throw badRequest(`cannot promote ${by.id ?? by.address}: ${message}`);
      throw serverError(`cannot promote ${by.id ?? by.address}: ${message}`);
    }
    return true;
  });
}
