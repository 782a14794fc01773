// /v1/catalog/* (spec "Catalog"; consul-behaviour §5.2–5.4).
import type { DeregisterRequest, RegisterRequest } from '@registry/store';
import { Type } from '@sinclair/typebox';
import { badRequest } from '../../errors';
import { nodeMeta } from '../query-options';
import { route, type Route } from '../route';
import { ReadOptionsQuery, readQuery } from '../../schemas/query-options';
import { List, RequiredText } from '../../schemas/query-fields';
import { compileBody } from '../../schemas/validator';
import { deregisterSchema, registerSchema } from '../../schemas/catalog';
import { aliasConsulNodeMeta } from '../../schemas/node-meta';
import { nearOf, readInto, type RouteDeps } from './deps';
import { readMaybeCached } from '../cached-read';
import { isUUID } from '@registry/acl';

const SERVICE_QUERY = readQuery({ tag: List() });
const SERVICE_PARAMS = Type.Object({ service: RequiredText('Missing service name') });
const NODE_PARAMS = Type.Object({ node: RequiredText('Missing node name') });

/** `datacenters`: this one and those linked by network areas, nearest first. */
export function catalogRoutes(deps: RouteDeps, datacenters: () => string[] = () => [deps.agent.datacenter]): Route<any>[] {
  const registerBody = compileBody(registerSchema);
  const deregisterBody = compileBody(deregisterSchema);

  return [
    route({
      method: 'PUT',
      path: '/v1/catalog/register',
      body: registerBody,
      async handle({ body, opts, clientGone }) {
        // Cheap checks at the edge spare a Raft round trip; the store checks everything again.
        if (!body.Node) throw badRequest('Must provide node');
        if (body.ID && !isUUID(body.ID)) throw badRequest(`Bad node ID: invalid UUID "${body.ID}"`);
        if (!body.Address && !body.SkipNodeUpdate) throw badRequest('Must provide address if SkipNodeUpdate is not set');
        const dc = body.Datacenter || opts.datacenter;
        const req = deps.agent.consulCompat && body.NodeMeta ? { ...body, NodeMeta: aliasConsulNodeMeta(body.NodeMeta) } : body;
        return deps.rpc.apply({ type: 'catalog.register', req: { ...req, Node: body.Node, Datacenter: dc } }, { datacenter: dc, token: opts.token, clientGone });
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/catalog/deregister',
      body: deregisterBody,
      async handle({ body, opts, clientGone }) {
        if (!body.Node) throw badRequest('Must provide node');
        const dc = body.Datacenter || opts.datacenter;
        return deps.rpc.apply({ type: 'catalog.deregister', req: { ...body, Node: body.Node, Datacenter: dc } }, { datacenter: dc, token: opts.token, clientGone });
      },
    }),
    route({
      method: 'GET',
      path: '/v1/catalog/datacenters',
      // Needs no leader: the datacenters this server knows of (network areas add more).
      handle: () => datacenters(),
    }),
    route({
      method: 'GET',
      path: '/v1/catalog/nodes',
      query: ReadOptionsQuery,
      handle: (ctx) => readInto(deps, ctx, 'catalog.nodes', { nodeMeta: nodeMeta(ctx.query['node-meta']), near: nearOf(ctx, deps) }),
    }),
    route({
      method: 'GET',
      path: '/v1/catalog/services',
      query: ReadOptionsQuery,
      handle: (ctx) => readInto(deps, ctx, 'catalog.services', { nodeMeta: nodeMeta(ctx.query['node-meta']) }),
    }),
    ...(['service', 'connect'] as const).map((kind) =>
      route({
        method: 'GET',
        path: `/v1/catalog/${kind}{/:service}`,
        query: SERVICE_QUERY,
        params: SERVICE_PARAMS,
        handle(ctx) {
          return readMaybeCached(deps, ctx, 'catalog.service', {
            service: ctx.params.service,
            tags: ctx.query.tag ?? [],
            nodeMeta: nodeMeta(ctx.query['node-meta']),
            near: nearOf(ctx, deps),
            connect: kind === 'connect',
          });
        },
      }),
    ),
    route({
      method: 'GET',
      path: '/v1/catalog/node{/:node}',
      params: NODE_PARAMS,
      handle(ctx) {
        return readInto(deps, ctx, 'catalog.node', { node: ctx.params.node });
      },
    }),
  ];
}
