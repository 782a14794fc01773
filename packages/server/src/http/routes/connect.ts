// /v1/connect/ca/* (consul-behaviour §7.2, §7.4): the roots (any server, no ACL) and the CA
// configuration (operator:read / operator:write; a key change rotates the root).
import { updateCaConfig, type CaConfigBody } from '../../connect/ca-config';
import { compileBody } from '../../schemas/validator';
import { caConfigSchema } from '../../schemas/connect';
import { forbidden } from '../../errors';
import { route, type Route } from '../route';
import { readInto, type RouteDeps } from './deps';

export function connectRoutes(deps: RouteDeps): Route<any>[] {
  return [
    route({
      method: 'GET',
      path: '/v1/connect/ca/roots',
      handle(ctx) {
        deps.connect.requireEnabled();
        return readInto(deps, ctx, 'connect.roots', {});
      },
    }),
    route({
      method: 'GET',
      path: '/v1/connect/ca/configuration',
      handle(ctx) {
        deps.connect.requireEnabled();
        return readInto(deps, ctx, 'connect.ca-config', {});
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/connect/ca/configuration',
      body: compileBody(caConfigSchema),
      async handle({ body, opts }) {
        const mesh = deps.connect;
        mesh.requireEnabled();
        // Checked here too, before serials are spent on a root the leader would refuse.
        if (!mesh.authorizer(opts.token).operatorWrite()) throw forbidden();
        await updateCaConfig(body, {
          store: mesh.store,
          applyInternal: (cmd) => deps.rpc.apply(cmd, { internal: true }),
          applyAsCaller: (cmd) => deps.rpc.apply(cmd, { token: opts.token, datacenter: opts.datacenter }),
        });
        return undefined;
      },
    }),
  ];
}
