// The agent's lifecycle endpoints (Consul 1.4 agent API): node and service maintenance, the agent's
// ACL tokens, force-leave, the log monitor and host facts. Each checks the caller's token here:
// they act on this agent, not on the replicated state.
import { agentTokenKind } from '../../acl/agent-tokens';
import { monitorLevelRank } from '../../runtime/log-tap';
import { aclDisabled, badRequest, notFound, serverError } from '../../errors';
import { agentTokenSchema, type AgentTokenBody } from '../../schemas/agent-lifecycle';
import { compileBody } from '../../schemas/validator';
import { demand, requestAuthorizer } from '../request-authorizer';
import { route, type Route } from '../route';
import { readQuery, writeQuery } from '../../schemas/query-options';
import { RequiredWords, Text } from '../../schemas/query-fields';
import type { AgentLifecycle, RouteDeps } from './deps';

/** `enable=true|false`, required (Consul's texts), and the reason shown on the maintenance check. */
const MAINTENANCE_QUERY = writeQuery({
  enable: RequiredWords({ true: true, '1': true, false: false, '0': false }, (v?: string) => (v ? `Invalid value for enable: ${JSON.stringify(v)}` : 'Missing value for enable')),
  reason: Text(),
});
const MONITOR_QUERY = readQuery({ loglevel: Text() });

export function agentLifecycleRoutes(deps: RouteDeps): Route<any>[] {
  const node = deps.agent.nodeName;
  const lifecycle = (): AgentLifecycle => {
    if (!deps.lifecycle) throw serverError('agent lifecycle endpoints are not wired into this agent');
    return deps.lifecycle;
  };
  return [
    route({
      method: 'PUT',
      path: '/v1/agent/maintenance',
      query: MAINTENANCE_QUERY,
      async handle(ctx) {
        await lifecycle().maintenance.setNode(ctx.query.enable, ctx.query.reason ?? '', requestAuthorizer(deps, ctx));
        return undefined;
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/agent/service/maintenance{/:id}',
      query: MAINTENANCE_QUERY,
      async handle(ctx) {
        const id = ctx.params.id;
        if (!id) throw badRequest('Missing service ID');
        await lifecycle().maintenance.setService(id, ctx.query.enable, ctx.query.reason ?? '', requestAuthorizer(deps, ctx));
        return undefined;
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/agent/token{/:kind}',
      body: compileBody(agentTokenSchema),
      async handle(ctx) {
        if (!deps.rpc.aclResolver.enabled) throw aclDisabled('ACL support disabled');
        demand(deps, ctx, (a) => a.agentWrite(node));
        const kind = agentTokenKind(ctx.params.kind ?? '');
        if (!kind) throw notFound(`Token ${JSON.stringify(ctx.params.kind ?? '')} is unknown`);
        await lifecycle().tokens.set(kind, ctx.body.Token ?? '');
        return undefined;
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/agent/force-leave{/:node}',
      async handle(ctx) {
        demand(deps, ctx, (a) => a.operatorWrite());
        const target = ctx.params.node;
        if (!target) throw badRequest('Missing node name');
        // An unknown node is not an error, as in Consul 1.4 (serf's RemoveFailedNode only broadcasts
        // an intent): force-leave is idempotent, and scripts that retry it must not fail (issue #29).
        await lifecycle().forceLeave(target, ctx.opts.token);
        return undefined;
      },
    }),
    route({
      method: 'GET',
      path: '/v1/agent/monitor',
      query: MONITOR_QUERY,
      handle(ctx) {
        demand(deps, ctx, (a) => a.agentRead(node));
        const level = ctx.query.loglevel || 'info';
        const rank = monitorLevelRank(level);
        if (rank === undefined) throw badRequest(`Unknown log level: ${level}`);
        const signal = ctx.signal;
        ctx.meta.stream = {
          contentType: 'text/plain; charset=utf-8',
          run: (write) =>
            new Promise<void>((resolve) => {
              // Until the client leaves (Consul streams until the request's context ends).
              const detach = lifecycle().monitor(rank, write);
              const done = () => {
                detach();
                resolve();
              };
              if (signal.aborted) done();
              else signal.addEventListener('abort', done, { once: true });
            }),
        };
        return undefined;
      },
    }),
    route({
      method: 'GET',
      path: '/v1/agent/host',
      async handle(ctx) {
        demand(deps, ctx, (a) => a.operatorRead());
        return lifecycle().host();
      },
    }),
  ];
}
