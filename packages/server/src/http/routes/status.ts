// /v1/status/*, /v1/operator/raft/*, and the agent's own /v1/agent/{self,members,join,leave}.
import { badRequest } from '../../errors';
import { resolvedJoinTarget } from '../join-target';
import { route, type Route } from '../route';
import { readQuery, writeQuery } from '../../schemas/query-options';
import { Flag, Text } from '../../schemas/query-fields';
import type { RouteDeps } from './deps';
import { demand } from '../request-authorizer';
import { leaderCallAllowed } from '../../endpoints/leader-call-acl';
import { filterMembers } from '../../acl/read-filters';
import { consulMembers, consulSelf } from '../consul-agent-view';

/** A server named by its Raft ID or its address (one of them; the handlers say which is missing). */
const PEER_QUERY = writeQuery({ id: Text(), address: Text() });
/** `?wan`: the servers of every datacenter known through network areas. */
const MEMBERS_QUERY = readQuery({ wan: Flag() });
const JOIN_QUERY = writeQuery({ wan: Flag() });

/** Exactly one of ?id and ?address names the server (Consul's operator raft endpoints); `which` ends the reason. */
function onePeer(q: { id?: string; address?: string }, which: string): { id?: string; address?: string } {
  if (!q.id && !q.address) throw badRequest(`Must specify either ?id with the server's ID or ?address with IP:port of ${which}`);
  if (q.id && q.address) throw badRequest('Must specify only one of ?id or ?address');
  return { id: q.id, address: q.address };
}

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
      query: PEER_QUERY,
      async handle(ctx) {
        demand(deps, ctx, (a) => leaderCallAllowed('Operator.RemovePeer', a, { id: ctx.query.id, address: ctx.query.address }));
        await cluster.removePeer(onePeer(ctx.query, 'peer to remove'), ctx.opts.token);
        return undefined;
      },
    }),
    route({
      // Issue #14: a non-voting server (-non-voter, a Raft learner) becomes a voter.
      method: 'POST',
      path: '/v1/operator/raft/promote',
      query: PEER_QUERY,
      async handle(ctx) {
        demand(deps, ctx, (a) => leaderCallAllowed('Operator.PromotePeer', a, { id: ctx.query.id, address: ctx.query.address }));
        const peer = onePeer(ctx.query, 'the non-voter to promote');
        if (!cluster.promotePeer) throw badRequest('promote is served by servers: ask a server agent');
        await cluster.promotePeer(peer);
        return { Success: true };
      },
    }),
    route({
      method: 'POST',
      path: '/v1/operator/raft/transfer-leader',
      query: PEER_QUERY,
      async handle(ctx) {
        const id = ctx.query.id || undefined;
        demand(deps, ctx, (a) => leaderCallAllowed('Operator.TransferLeader', a, { id }));
        await cluster.transferLeader(id, ctx.opts.token);
        return { Success: true };
      },
    }),
    route({
      method: 'GET',
      path: '/v1/agent/self',
      handle(ctx) {
        demand(deps, ctx, (a) => a.agentRead(node));
        const self = cluster.self() as Record<string, unknown>;
        return deps.agent.consulCompat ? consulSelf(self) : self;
      },
    }),
    route({
      method: 'GET',
      path: '/v1/agent/members',
      query: MEMBERS_QUERY,
      async handle(ctx) {
        const authz = demand(deps, ctx, () => true);
        // ?wan=1: the servers of every datacenter known through network areas, named node.dc.
        const named = <T>(members: T[]): T[] => (deps.agent.consulCompat ? consulMembers(members) : members);
        if (ctx.query.wan) return named(filterMembers(authz, (deps.lifecycle?.wanMembers() ?? []) as { Name: string }[], true));
        return named(filterMembers(authz, (await cluster.members()) as { Name: string }[]));
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/agent/join/:address',
      query: JOIN_QUERY,
      async handle(ctx) {
        const { params } = ctx;
        demand(deps, ctx, (a) => a.agentWrite(node));
        if (ctx.query.wan) {
          if (!deps.lifecycle) throw badRequest('WAN join is not available on this agent');
          await deps.lifecycle.wanJoin(await resolvedJoinTarget(params.address), ctx.opts.token);
          return undefined;
        }
        await cluster.join(await resolvedJoinTarget(params.address));
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
