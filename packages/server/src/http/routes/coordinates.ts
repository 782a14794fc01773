// /v1/coordinate/* (Consul 1.4's coordinate endpoints): WAN coordinates of the servers of every
// linked datacenter, the LAN coordinates of nodes (node:read), and updates (node:write, checked on
// the leader by the coordinate.update command's ACL case).
import { badRequest, notFound } from '../../errors';
import { Type } from '@sinclair/typebox';
import { route, type Route } from '../route';
import { readQuery } from '../../schemas/query-options';
import { RequiredText, Text } from '../../schemas/query-fields';
import { compileBody } from '../../schemas/validator';
import { coordinateUpdateSchema, type CoordinateBody } from '../../schemas/coordinate';
import type { Coordinate, NodeCoordinate } from '@registry/store';
import { originCoordinate } from '../../areas/vivaldi-client';
import type { WanRouteDeps } from '../../areas/wan-route-deps';
import { readInto, type RouteDeps } from './deps';

const SEGMENT_QUERY = readQuery({ segment: Text() });
const NODE_PARAMS = Type.Object({ node: RequiredText('Missing node name') });

export function coordinateRoutes(deps: RouteDeps, wan: WanRouteDeps): Route<any>[] {
  const updateBody = compileBody(coordinateUpdateSchema);
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
      query: SEGMENT_QUERY,
      handle: (ctx) => readInto(deps, ctx, 'coordinate.nodes', { segment: ctx.query.segment }),
    }),
    route({
      method: 'GET',
      path: '/v1/coordinate/node{/:node}',
      query: SEGMENT_QUERY,
      params: NODE_PARAMS,
      async handle(ctx) {
        const node = ctx.params.node;
        const value = await readInto(deps, ctx, 'coordinate.node', { node, segment: ctx.query.segment });
        if (value.length === 0) throw notFound(`Unknown node "${node}" or no coordinate for it`);
        return value;
      },
    }),
    route({
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
