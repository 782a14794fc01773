// Adding a server as one idempotent step. The leader's reconciliation (readmission.ts), a `join`
// from either side and a server's own join may add the same server at about the same moment, and
// Raft takes one configuration change at a time (a second waits up to 10 s for the one before it
// to commit, then is refused: "already in progress"). A server already in the configuration with
// that address and role is done; an add refused that way is tried again, looking first whether the
// other change was this very add.
import type { RaftNode, ServerInfo } from '@registry/raft';
import { monotonicMs } from '../time';

const RETRY_MS = 100;

/**
 * A server asking in (join.ts `onJoin`) or named by `registry join` on a member (`Cluster.AddServer`):
 * a member keeps its role (a new address only); a new server comes in as a learner, and is promoted
 * once it has caught up (promote-caught-up.ts). Added as a voter at once, a server that never
 * answered would count against the quorum.
 */
export async function admitServer(raft: RaftNode, server: { id: string; address: string }): Promise<void> {
  const member = raft.configuration().find((s) => s.id === server.id);
  const learner = member ? member.learner === true : true;
  await addServerOnce(raft, learner ? { id: server.id, address: server.address, learner: true } : { id: server.id, address: server.address });
}

export async function addServerOnce(raft: RaftNode, server: ServerInfo, waitMs = 5_000): Promise<void> {
  const deadline = monotonicMs() + waitMs;
  for (;;) {
    const have = raft.configuration().find((s) => s.id === server.id);
    if (have && have.address === server.address && (have.learner === true) === (server.learner === true)) return;
    try {
      await raft.addServer(server);
      return;
    } catch (err) {
      if (!/already in progress/.test((err as Error).message) || monotonicMs() >= deadline) throw err;
    }
    await new Promise((r) => setTimeout(r, RETRY_MS));
  }
}
