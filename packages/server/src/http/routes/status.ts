// /v1/status/*, /v1/operator/raft/*, and the agent's own /v1/agent/{self,members,join,leave}.
import { badRequest } from '../errors';
import { single } from '../query-options';
import { route, type Route } from '../route';
import type { RouteDeps } from './deps';

export function statusRoutes(deps: RouteDeps): Route<any>[] {
  const { cluster } = deps;
  return [
    route({ method: 'GET', path: '/v1/status/leader', handle: () => cluster.leaderAddress() }),
    route({ method: 'GET', path: '/v1/status/peers', handle: () => cluster.peers() }),
    route({ method: 'GET', path: '/v1/operator/raft/configuration', handle: () => cluster.raftConfiguration() }),
    route({
      method: 'DELETE',
      path: '/v1/operator/raft/peer',
      async handle({ query }) {
        const id = single(query, 'id');
        const address = single(query, 'address');
        if (!id && !address) throw badRequest('Must specify either ?id with the server\'s ID or ?address with IP:port of peer to remove');
        if (id && address) throw badRequest('Must specify only one of ?id or ?address');
        await cluster.removePeer({ id, address });
        return undefined;
      },
    }),
    route({
      method: 'POST',
      path: '/v1/operator/raft/transfer-leader',
      async handle({ query }) {
        await cluster.transferLeader(single(query, 'id') || undefined);
        return { Success: true };
      },
    }),
    route({ method: 'GET', path: '/v1/agent/self', handle: () => cluster.self() }),
    route({ method: 'GET', path: '/v1/agent/members', handle: () => cluster.members() }),
    route({
      method: 'PUT',
      path: '/v1/agent/join/:address',
      async handle({ params }) {
        await cluster.join(params.address);
        return undefined;
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/agent/leave',
      async handle() {
        await cluster.leave();
        return undefined;
      },
    }),
  ];
}
