// /v1/status/*, /v1/operator/raft/*, and the agent's own /v1/agent/{self,members,join,leave}.
import { badRequest } from '../../errors';
import { joinTarget } from '../join-target';
import { flag, single } from '../query-options';
import { route, type Route } from '../route';
import type { RouteDeps } from './deps';
import { demand } from '../request-authorizer';

export function statusRoutes(deps: RouteDeps): Route<any>[] {
  const { cluster } = deps;
  const node = deps.agent.nodeName;
  return [
    route({ method: 'GET', path: '/v1/status/leader', handle: () => cluster.leaderAddress() }),
    route({ method: 'GET', path: '/v1/status/peers', handle: () => cluster.peers() }),
    route({
      method: 'GET',
      path: '/v1/operator/raft/configuration',
      handle(ctx) {
        demand(deps, ctx, (a) => a.operatorRead());
        return cluster.raftConfiguration();
      },
    }),
    route({
      method: 'DELETE',
      path: '/v1/operator/raft/peer',
      async handle(ctx) {
        const { query } = ctx;
        demand(deps, ctx, (a) => a.operatorWrite());
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
      async handle(ctx) {
        const { query } = ctx;
        demand(deps, ctx, (a) => a.operatorWrite());
        await cluster.transferLeader(single(query, 'id') || undefined);
        return { Success: true };
      },
    }),
    route({
      method: 'GET',
      path: '/v1/agent/self',
      handle(ctx) {
        demand(deps, ctx, (a) => a.agentRead(node));
        return cluster.self();
      },
    }),
    route({
      method: 'GET',
      path: '/v1/agent/members',
      async handle(ctx) {
        const authz = demand(deps, ctx, () => true);
        // ?wan=1: the servers of every datacenter known through network areas, named node.dc.
        if (flag(ctx.query, 'wan')) return (deps.lifecycle?.wanMembers() ?? []).filter((m) => authz.nodeRead((m as { Name: string }).Name.replace(/\.[^.]*$/, '')));
        return (await cluster.members()).filter((m) => authz.nodeRead((m as { Name: string }).Name));
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/agent/join/:address',
      async handle(ctx) {
        const { params } = ctx;
        demand(deps, ctx, (a) => a.agentWrite(node));
        if (flag(ctx.query, 'wan')) {
          if (!deps.lifecycle) throw badRequest('WAN join is not available on this agent');
          await deps.lifecycle.wanJoin(joinTarget(params.address), ctx.opts.token);
          return undefined;
        }
        await cluster.join(joinTarget(params.address));
        return undefined;
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/agent/leave',
      async handle(ctx) {
        demand(deps, ctx, (a) => a.agentWrite(node));
        await cluster.leave();
        return undefined;
      },
    }),
  ];
}
