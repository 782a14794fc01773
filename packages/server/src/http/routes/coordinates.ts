// /v1/coordinate/* (Consul 1.4's coordinate endpoints): WAN coordinates of the servers of every
// linked datacenter, the LAN coordinates of nodes (node:read), and updates (node:write, checked on
// the leader by the coordinate.update command's ACL case).
import { badRequest, notFound } from '../../errors';
import { single } from '../query-options';
import { route, type Route } from '../route';
import { compileBody } from '../../schemas/validator';
import { coordinateUpdateSchema, type CoordinateBody } from '../../schemas/coordinate';
import type { Coordinate, NodeCoordinate } from '@registry/store';
import { originCoordinate } from '../../areas/vivaldi-client';
import type { WanRouteDeps } from '../../areas/wan-route-deps';
import { readInto, type RouteDeps } from './deps';

export function coordinateRoutes(deps: RouteDeps, wan: WanRouteDeps): Route<any>[] {
  const updateBody = compileBody<CoordinateBody>(coordinateUpdateSchema);
  const dimensions = originCoordinate().Vec.length;

  return [
    route({
      method: 'GET',
      path: '/v1/coordinate/datacenters',
      // Like /v1/catalog/datacenters: no ACL, no leader needed.
      handle: () => wan.coordinateDatacenters(),
    }),
    route({
      method: 'GET',
      path: '/v1/coordinate/nodes',
      handle: (ctx) => readInto(deps, ctx, 'coordinate.nodes', { segment: single(ctx.query, 'segment') }),
    }),
    route({
      method: 'GET',
      path: '/v1/coordinate/node{/:node}',
      async handle(ctx) {
        const node = ctx.params.node;
        if (!node) throw badRequest('Missing node name');
        const value = await readInto<NodeCoordinate[]>(deps, ctx, 'coordinate.node', { node, segment: single(ctx.query, 'segment') });
        if (value.length === 0) throw notFound(`Unknown node "${node}" or no coordinate for it`);
        return value;
      },
    }),
    route<CoordinateBody>({
      method: 'PUT',
      path: '/v1/coordinate/update',
      body: updateBody,
      async handle({ body, opts, clientGone }) {
        if (!body.Node) throw badRequest('Must provide a node name');
        const c = body.Coord;
        if (!c || !Array.isArray(c.Vec)) throw badRequest('Must provide a coordinate');
        const coord: Coordinate = { Vec: c.Vec, Error: c.Error ?? 0, Adjustment: c.Adjustment ?? 0, Height: c.Height ?? 0 };
        if (coord.Vec.length !== dimensions) throw badRequest(`Rejected bad coordinate: it has ${coord.Vec.length} dimensions, servers use ${dimensions}`);
        if (![...coord.Vec, coord.Error, coord.Adjustment, coord.Height].every(Number.isFinite)) throw badRequest('Rejected bad coordinate: values must be finite');
        await deps.rpc.apply({ type: 'coordinate.update', updates: [{ Node: body.Node, Coord: coord }] }, { datacenter: opts.datacenter, token: opts.token, clientGone });
        return undefined;
      },
    }),
  ];
}
