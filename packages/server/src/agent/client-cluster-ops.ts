// The cluster operations of the agent routes (status, operator, members, join, leave) on a client
// agent: it has no Raft, so each is asked of a server (cluster/client-gateway.ts) or the leader.
import type { ClusterOps } from '../http/routes/deps';
import { fromEnvelope } from '../rpc/envelope';
import type { RpcApi } from '../rpc/rpc-api';
import { badRequest, serverError } from '../errors';
import type { Heartbeats } from '../client/heartbeats';
import type { ServerLink } from '../client/server-link';

const CALL_MS = 5_000;

export interface ClientClusterParts {
  link: ServerLink;
  rpc: RpcApi;
  heartbeats: Heartbeats;
  node: string;
  /** Stop heartbeating, tell the leader this client leaves (its node is deregistered), then stop. */
  leave(): Promise<void>;
  self(): unknown;
}

export function clientClusterOps(p: ClientClusterParts): ClusterOps {
  return {
    leaderAddress: () => p.heartbeats.leader,
    peers: () => [...p.link.known],
    raftConfiguration: async () => fromEnvelope(await p.link.call('client.raft-configuration', null, CALL_MS, CALL_MS * 2)),
    removePeer: async (by, token) => {
      await p.rpc.leader.call('Operator.RemovePeer', by, undefined, token);
    },
    transferLeader: async (id, token) => {
      await p.rpc.leader.call('Operator.TransferLeader', { id }, undefined, token);
    },
    members: async () => fromEnvelope(await p.link.call<unknown[]>('client.members', null, CALL_MS, CALL_MS * 2)),
    join: async (address) => {
      // A client joins a datacenter by reaching one of its servers: it is then told of the others.
      const before = p.link.known;
      p.link.update([address, ...before.filter((a) => a !== address)]);
      if (!(await p.heartbeats.beat())) {
        p.link.update([...before]);
        throw serverError(`failed to join ${address}: no registry server answered`);
      }
    },
    leave: () => p.leave(),
    self: () => p.self(),
  };
}

/** `force-leave` from a client: the leader removes a client node (servers are removed from a server). */
export async function clientForceLeave(rpc: RpcApi, node: string, token: string | undefined): Promise<boolean> {
  if (!node) throw badRequest('node name required');
  return rpc.leader.call('Cluster.ClientLeave', { node }, undefined, token);
}
