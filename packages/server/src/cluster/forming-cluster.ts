// A new cluster's servers bootstrap one by one (join.ts): the first to know `bootstrap-expect`
// servers writes the configuration; a server that greets it later sees it "in a cluster" without a
// leader yet. Before issue #16 such a server simply voted for it with an empty log. Now a server
// with no Raft state stays out of elections until it has caught up with a leader (it may be a
// member whose data dir was lost), so the first server could never be elected. The later one
// therefore bootstraps too, with the very configuration the others hold — the same entry 1 of
// term 1, so no two logs disagree — but only while that cluster provably never had anything
// committed: every other member of that configuration answered, and none holds an entry beyond
// the bootstrap one. (An entry committed with a lost server's help is on a majority, which
// includes another member; a member of a cluster that ever elected a leader holds its no-op.)
import type { ServerInfo } from '@registry/raft';
import type { HelloReply } from './server-info';

/** The configuration to bootstrap with alongside a cluster still being formed, or null. */
export function formingClusterConfiguration(selfId: string, replies: readonly HelloReply[]): ServerInfo[] | null {
  const inCluster = replies.filter((r) => r.inCluster);
  if (inCluster.length === 0) return null;
  const first = inCluster[0].servers;
  if (!first || !first.some((s) => s.id === selfId)) return null;
  const key = (servers: readonly ServerInfo[]) => servers.map((s) => `${s.id}@${s.address}`).sort().join(',');
  if (!inCluster.every((r) => r.servers && key(r.servers) === key(first))) return null;
  const byId = new Map(replies.map((r) => [r.id, r]));
  for (const member of first) {
    if (member.id === selfId) continue;
    const reply = byId.get(member.id);
    if (!reply || reply.lastIndex === undefined || reply.lastIndex > 1 || reply.leader) return null;
  }
  return first.map((s) => ({ id: s.id, address: s.address }));
}
