// PUT /v1/agent/reload: re-read the agent's config files and apply them, as SIGHUP does (ACL
// agent:write on this node). An invalid configuration is a 400 listing every problem; the running
// configuration stays.
import { ConfigError } from '../../config/config-sources';
import { badRequest, serverError } from '../../errors';
import { route, type Route } from '../route';
import { demand } from '../request-authorizer';
import type { RouteDeps } from './deps';

export function agentReloadRoutes(deps: RouteDeps): Route<any>[] {
  return [
    route({
      method: 'PUT',
      path: '/v1/agent/reload',
      async handle(ctx) {
        demand(deps, ctx, (a) => a.agentWrite(deps.agent.nodeName));
        if (!deps.reload) throw serverError('this agent cannot reload its configuration');
        try {
          await deps.reload();
        } catch (err) {
          // One line per problem keeps the reason readable; the first line says what happened.
          if (err instanceof ConfigError) throw badRequest(`Failed to reload configs: ${err.errors.join('; ')}`);
          throw err;
        }
        return undefined;
      },
    }),
  ];
}
