// /v1/operator/area* (spec "Network areas"; consul-behaviour §8). Create, update and delete go
// through Raft like any write (and so follow `?dc=` to another datacenter); join and members are
// not Raft operations and are run by a server of the datacenter asked for (areas/area-ops.ts).
import { randomUUID } from 'node:crypto';
import type { AreaOut, AreaUpdateResult } from '@registry/store';
import { badRequest, notFound } from '../../errors';
import { route, type Route } from '../route';
import { compileBody } from '../../schemas/validator';
import { areaJoinSchema, areaSchema, areaUpdateSchema, type AreaBody, type AreaUpdateBody } from '../../schemas/area';
import { joinAddress } from '../../areas/join-address';
import { AREA_NOT_FOUND } from '../../areas/area-ops';
import type { WanRouteDeps } from '../../areas/wan-route-deps';
import { readInto, type RouteDeps } from './deps';

export function areaRoutes(deps: RouteDeps, wan: WanRouteDeps): Route<any>[] {
  const createBody = compileBody(areaSchema);
  const updateBody = compileBody(areaUpdateSchema);
  const joinBody = compileBody(areaJoinSchema);

  return [
    route({
      method: 'POST',
      path: '/v1/operator/area',
      body: createBody,
      async handle({ body, opts, clientGone }) {
        if (!body.PeerDatacenter) throw badRequest('Must provide a PeerDatacenter');
        for (const a of body.RetryJoin ?? []) {
          const parsed = joinAddress(a);
          if (parsed instanceof Error) throw badRequest(`Invalid RetryJoin address: ${parsed.message}`);
        }
        const area = { ID: randomUUID(), PeerDatacenter: body.PeerDatacenter, RetryJoin: body.RetryJoin ?? null, UseTLS: body.UseTLS ?? false };
        const r = (await deps.rpc.apply({ type: 'area.create', area }, { datacenter: opts.datacenter, token: opts.token, clientGone })) as { ID: string };
        return { ID: r.ID };
      },
    }),
    route({
      method: 'GET',
      path: '/v1/operator/area',
      handle: (ctx) => readInto(deps, ctx, 'area.list', {}),
    }),
    route({
      method: 'PUT',
      path: '/v1/operator/area/:id',
      body: updateBody,
      bodyOptional: true,
      async handle({ body, params, opts, clientGone }) {
        const r = (await deps.rpc.apply({ type: 'area.update', id: params.id, UseTLS: body.UseTLS ?? false }, { datacenter: opts.datacenter, token: opts.token, clientGone })) as AreaUpdateResult;
        if ('notFound' in r) throw notFound(AREA_NOT_FOUND);
        return { ID: r.ID };
      },
    }),
    route({
      method: 'GET',
      path: '/v1/operator/area/:id',
      async handle(ctx) {
        const area = await readInto(deps, ctx, 'area.get', { id: ctx.params.id });
        if (!area) throw notFound(AREA_NOT_FOUND);
        return [area];
      },
    }),
    route({
      method: 'DELETE',
      path: '/v1/operator/area/:id',
      async handle({ params, opts, clientGone }) {
        const deleted = await deps.rpc.apply({ type: 'area.delete', id: params.id }, { datacenter: opts.datacenter, token: opts.token, clientGone });
        if (!deleted) throw notFound(AREA_NOT_FOUND);
        return undefined;
      },
    }),
    route({
      method: 'PUT',
      path: '/v1/operator/area/:id/join',
      body: joinBody,
      handle: ({ body, params, opts }) => wan.areaJoin(opts.datacenter, params.id, body, opts.token),
    }),
    route({
      method: 'GET',
      path: '/v1/operator/area/:id/members',
      handle: ({ params, opts }) => wan.areaMembers(opts.datacenter, params.id, opts.token),
    }),
  ];
}
