// The agent-lifecycle part of the HTTP deps (tokens, maintenance, monitor, host, force-leave, the
// WAN view), built from the agent's parts so that agent.ts only wires it in.
import type { RaftNode } from '@registry/raft';
import type { Store } from '@registry/store';
import { randomUUID } from 'node:crypto';
import type { AgentTokens } from '../acl/agent-tokens';
import type { Maintenance } from '../local/maintenance';
import type { Areas } from '../areas/install';
import { badRequest, serverError } from '../errors';
import type { AgentLifecycle } from '../http/routes/deps';
import type { Rpc } from '../rpc/rpc';
import { hostFacts } from './host-facts';
import type { LogTap } from '../runtime/log-tap';
import { serverMember } from '../cluster/member-record';

export interface LifecycleParts {
  datacenter: string;
  dataDir: string;
  raft: RaftNode;
  store: Store;
  rpc: Rpc;
  areas: Areas | undefined;
  tokens: AgentTokens;
  maintenance: Maintenance;
  logTap: LogTap;
  /** The node name of a server of the Raft configuration. */
  nodeNameOf(id: string): string;
}

/** The node id of server node `node` in the catalog, if it is one. */
function serverNodeId(store: Store, node: string): string | undefined {
  const entry = store.catalogNode(node).value;
  return entry?.Services['registry'] && entry.Node.ID && entry.Node.Node === node ? entry.Node.ID : undefined;
}

export function agentLifecycle(p: LifecycleParts): AgentLifecycle {
  return {
    tokens: p.tokens,
    maintenance: p.maintenance,
    monitor: (minRank, listener) => p.logTap.attach(minRank, listener),
    host: () => hostFacts(p.dataDir),
    async forceLeave(node) {
      // A server of the configuration, or one removed earlier (its catalog node holds the `registry` service).
      const id = p.raft.configuration().find((s) => p.nodeNameOf(s.id) === node)?.id ?? serverNodeId(p.store, node);
      if (id) {
        // Consul's force-leave moves a failed member to "left"; here that is leaving the Raft
        // configuration, and a mark on its catalog node that keeps the leader from adding it back
        // (cluster/force-leave.ts). The catalog keeps the node, so /v1/agent/members lists it as left.
        return p.rpc.leader.call('Cluster.ForceLeaveServer', { id });
      }
      // A client agent: the leader deregisters its node and lists it as left (cluster/client-liveness.ts).
      if (!p.store.catalogNode(node).value?.Services['registry'] && (await p.rpc.leader.call('Cluster.ClientLeave', { node }))) return true;
      // Already left: still a server node in the catalog (idempotent, as Consul's).
      return !!p.store.catalogNode(node).value?.Services['registry'];
    },
    wanMembers() {
      const links = p.areas?.links;
      const servers = links ? [...links.localServers(), ...links.peerServers()] : [];
      return servers.map((s) => {
        const local = s.datacenter === p.datacenter;
        const alive = local || links?.status.state(s.id) === 'alive';
        return serverMember({ name: `${s.node}.${s.datacenter}`, address: s.address, datacenter: s.datacenter, id: s.id, build: s.build }, alive ? 1 : 4);
      });
    },
    async wanJoin(address, token) {
      const areas = p.areas;
      if (!areas) throw serverError('WAN links are not running on this agent');
      let peer: string;
      try {
        peer = (await areas.links.hello(address, undefined, { linkBack: true })).self.datacenter;
      } catch (err) {
        throw serverError(`Failed to join ${address}: ${(err as Error).message}`);
      }
      if (peer.toLowerCase() === p.datacenter.toLowerCase()) throw badRequest(`Server at ${address} is in this datacenter (${peer}): join it without wan`);
      // Registry has no WAN gossip pool: a WAN join is a network area to the peer's datacenter,
      // made on first join (docs/agent-lifecycle.md).
      let area = p.store.areaList().value.find((a) => a.PeerDatacenter.toLowerCase() === peer.toLowerCase());
      if (!area) {
        const made = { ID: randomUUID(), PeerDatacenter: peer, RetryJoin: null, UseTLS: false };
        await p.rpc.apply({ type: 'area.create', area: made }, { token });
        area = made;
      }
      const results = (await areas.routes.areaJoin(p.datacenter, area.ID, [address], token)) as { Joined: boolean; Error: string }[];
      const failed = results.find((r) => !r.Joined);
      if (failed) throw serverError(failed.Error);
    },
  };
}
