// This agent's services (consul-behaviour Appendix A): register (with Connect proxies, sidecars and
// managed proxies), deregister, list — all through the agent's local state (local/local-state.ts),
// on either agent kind. The caller's token is resolved here and checked by the local state; the
// catalog is written with the agent's authority.
import { contentHash, type ServiceDefinition } from '../../local/local-services';
import { Type } from '@sinclair/typebox';
import { blockOnHash, HASH_QUERY } from '../hash-blocking';
import { RequiredText } from '../../schemas/query-fields';

const ID_PARAMS = Type.Object({ id: RequiredText('Missing service ID') });
import { compileBody } from '../../schemas/validator';
import { agentServiceSchema } from '../../schemas/agent-service';
import { badRequest, notFound } from '../../errors';
import { route, type Route } from '../route';
import type { RouteDeps } from './deps';

export function agentServiceRoutes(deps: RouteDeps): Route<any>[] {
  const authz = (token: string | undefined) => deps.rpc.aclResolver.resolve(token);
  return [
    route({
      method: 'PUT',
      path: '/v1/agent/service/register',
      body: compileBody(agentServiceSchema),
      async handle({ body, opts }) {
        // The token is what its managed proxy, if any, will act with (connect/proxy-tokens.ts).
        await deps.local.addService(body, authz(opts.token), { token: opts.token ?? '' });
        return undefined;
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/agent/service/deregister{/:id}',
      params: ID_PARAMS,
      async handle({ params, opts }) {
        const id = params.id;
        const found = await deps.local.removeService(id, authz(opts.token));
        // Consul: unknown IDs are fine with ACLs off, an error with them on.
        if (!found && deps.local.aclsEnabled) throw badRequest(`Unknown service ${JSON.stringify(id)}`);
        return undefined;
      },
    }),
    route({
      method: 'GET',
      path: '/v1/agent/services',
      handle({ opts }) {
        return deps.local.listServices(authz(opts.token));
      },
    }),
    route({
      method: 'GET',
      path: '/v1/agent/service/:id',
      query: HASH_QUERY,
      handle(ctx) {
        const reader = authz(ctx.opts.token);
        const current = () => {
          const out = deps.local.listServices(reader)[ctx.params.id!] as Record<string, unknown> | undefined;
          // Consul's text for this endpoint, "proxy" and all.
          if (!out) throw notFound(`unknown proxy service ID: ${ctx.params.id}`);
          const { CreateIndex: _c, ModifyIndex: _m, ...hashed } = out;
          return { ...out, ContentHash: contentHash(hashed) };
        };
        return blockOnHash(deps.local, ctx, current);
      },
    }),
  ];
}
