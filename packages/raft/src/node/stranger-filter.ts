// Raft messages from ids outside this server's configuration (issue 31: anyone who can reach the
// server port can send a frame naming any sender and any term). A message with a higher term moves
// a server to that term and makes a leader step down, so a stranger's frame could depose a healthy
// leader over and over. hashicorp/raft refuses votes from non-members; here every message from a
// stranger is dropped (as a lost message: Raft tolerates loss) except where the stranger may be a
// leader this server does not know of yet:
//   - a server with no configuration (being added: it hears from the leader before it learns the
//     configuration) takes everything;
//   - append, heartbeat and snapshot from a stranger are taken unless this server leads or heard
//     from its leader within an election timeout. A lagging follower whose configuration predates
//     the current leader would otherwise never catch up; while its own leader is alive it waits (at
//     most one election timeout), as a follower in its lease does with a disruptive vote request;
//   - the leader this server follows now is never a stranger. A log being caught up can hold a
//     configuration that left that leader out for a while (removed, then added back): a server
//     replaying it took the leader's messages until that entry, then refused them as a stranger's
//     — its lease with that same leader kept fresh by the heartbeats the lease let through — and
//     never reached the entry that added the leader back (the membership nemesis, a wiped server).
// A sender that forges a member's id is not a stranger: only authenticated links (TLS with
// verify_incoming_rpc) stop that.
import type { Message, NodeId } from '../core/types';

export interface StrangerView {
  /** Ids in the configuration (empty: none yet). */
  members: ReadonlyArray<{ id: NodeId }>;
  self: NodeId;
  /** The leader this server follows now (the core's), if any. */
  leader: NodeId | null;
  leading: boolean;
  /** Milliseconds since a member leader was last heard from (Infinity: never). */
  sinceLeaderContactMs: number;
  electionTimeoutMs: number;
}

/** Why `m` is dropped, or null when it is taken. */
export function strangerDrop(m: Message, view: StrangerView): string | null {
  if (view.members.length === 0 || m.from === view.self || m.from === view.leader) return null;
  if (view.members.some((s) => s.id === m.from)) return null;
  const fromALeader = m.type === 'append' || m.type === 'heartbeat' || m.type === 'snapshot';
  if (!fromALeader) return `${m.type} from ${m.from}, not a member`;
  if (view.leading) return `${m.type} from ${m.from}, not a member, while this server leads`;
  if (view.sinceLeaderContactMs < view.electionTimeoutMs) return `${m.type} from ${m.from}, not a member, while the leader is in contact`;
  return null;
}
