// This agent's checks (consul-behaviour Appendix A): register, deregister, TTL pass/warn/fail and
// update, list, through the agent's local state (local/local-state.ts). The caller's token is
// resolved here and checked there (node:write for node checks, service:write for service checks);
// the catalog is written with the agent's authority.
import { isCheckStatus, type CheckStatus } from '../../checks/check-spec';
import { checkRegisterSchema, checkUpdateSchema, type AgentCheckDefinition, type CheckUpdateBody } from '../../schemas/agent-check';
import { compileBody } from '../../schemas/validator';
import { badRequest } from '../../errors';
import { route, type Route } from '../route';
import { writeQuery } from '../../schemas/query-options';
import { Type } from '@sinclair/typebox';
import { RequiredText, Text } from '../../schemas/query-fields';
import type { RouteDeps } from './deps';

const TTL_QUERY = writeQuery({ note: Text() });
const ID_PARAMS = Type.Object({ id: RequiredText('Missing check ID') });

const TTL_VERBS: [string, CheckStatus][] = [
  ['pass', 'passing'],
  ['warn', 'warning'],
  ['fail', 'critical'],
];

export function agentCheckRoutes(deps: RouteDeps): Route<any>[] {
  const authz = (token: string | undefined) => deps.rpc.aclResolver.resolve(token);
  return [
    route({
      method: 'PUT',
      path: '/v1/agent/check/register',
      body: compileBody(checkRegisterSchema),
      async handle({ body, opts }) {
        await deps.local.addCheck(body, authz(opts.token));
        return undefined;
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/agent/check/deregister{/:id}',
      params: ID_PARAMS,
      async handle({ params, opts }) {
        await deps.local.removeCheck(params.id, authz(opts.token));
        return undefined;
      },
    }),
    ...TTL_VERBS.map(([verb, status]) =>
      route({
        method: 'PUT',
        path: `/v1/agent/check/${verb}{/:id}`,
        query: TTL_QUERY,
        params: ID_PARAMS,
        async handle({ params, query, opts }) {
          await deps.local.updateTtl(params.id, status, query.note ?? '', authz(opts.token));
          return undefined;
        },
      }),
    ),
    route({
      method: 'PUT',
      path: '/v1/agent/check/update{/:id}',
      body: compileBody(checkUpdateSchema),
      params: ID_PARAMS,
      async handle({ params, body, opts }) {
        const id = params.id;
        const status = body.Status ?? '';
        if (!isCheckStatus(status)) throw badRequest(`Invalid check status: '${status}'`);
        await deps.local.updateTtl(id, status, body.Output ?? '', authz(opts.token));
        return undefined;
      },
    }),
    route({
      method: 'GET',
      path: '/v1/agent/checks',
      handle({ opts }) {
        return deps.local.listChecks(authz(opts.token));
      },
    }),
  ];
}
