// This agent's services (consul-behaviour Appendix A): register (with Connect proxies, sidecars and
// managed proxies), deregister, list. Only server agents exist, so services live on the agent's own
// node; the caller's token is checked here and the catalog is written with the agent's authority.
import { contentHash, type ServiceDefinition } from '../../connect/local-services';
import { Type } from '@sinclair/typebox';
import { blockOnHash, HASH_QUERY } from '../hash-blocking';
import { RequiredText } from '../../schemas/query-fields';

const ID_PARAMS = Type.Object({ id: RequiredText('Missing service ID') });
import { compileBody } from '../../schemas/validator';
import { agentServiceSchema } from '../../schemas/agent-service';
import { badRequest, notFound } from '../../errors';
import { route, type Route } from '../route';
import { meshOf } from './connect';
import type { RouteDeps } from './deps';

export function agentServiceRoutes(deps: RouteDeps): Route<any>[] {
  return [
    route<ServiceDefinition>({
      method: 'PUT',
      path: '/v1/agent/service/register',
      body: compileBody<ServiceDefinition>(agentServiceSchema),
      async handle({ body, opts }) {
        const mesh = meshOf(deps);
        // Through the agent's checks when wired: they run the service's checks and persist it.
        if (deps.checks) await deps.checks.registerService(body, mesh.authorizer(opts.token));
        else await mesh.registerService(body, mesh.authorizer(opts.token));
        // What its managed proxy, if any, will act with (connect/proxy-tokens.ts).
        mesh.serviceTokens.remember(body.ID || body.Name!, opts.token);
        return undefined;
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/agent/service/deregister{/:id}',
      params: ID_PARAMS,
      async handle({ params, opts }) {
        const id = params.id;
        const mesh = meshOf(deps);
        const authz = mesh.authorizer(opts.token);
        const found = deps.checks ? await deps.checks.deregisterService(id, authz) : await mesh.deregisterService(id, authz);
        if (found) mesh.serviceTokens.forget(id);
        // Consul: unknown IDs are fine with ACLs off, an error with them on.
        if (!found && mesh.intentionDefaults().aclsEnabled) throw badRequest(`Unknown service ${JSON.stringify(id)}`);
        return undefined;
      },
    }),
    route({
      method: 'GET',
      path: '/v1/agent/services',
      handle({ opts }) {
        const mesh = meshOf(deps);
        return mesh.listServices(mesh.authorizer(opts.token));
      },
    }),
    route({
      method: 'GET',
      path: '/v1/agent/service/:id',
      query: HASH_QUERY,
      handle(ctx) {
        const mesh = meshOf(deps);
        const authz = mesh.authorizer(ctx.opts.token);
        const current = () => {
          const out = mesh.listServices(authz)[ctx.params.id!] as Record<string, unknown> | undefined;
          // Consul's text for this endpoint, "proxy" and all.
          if (!out) throw notFound(`unknown proxy service ID: ${ctx.params.id}`);
          const { CreateIndex: _c, ModifyIndex: _m, ...hashed } = out;
          return { ...out, ContentHash: contentHash(hashed) };
        };
        return blockOnHash(mesh, ctx, current);
      },
    }),
  ];
}
