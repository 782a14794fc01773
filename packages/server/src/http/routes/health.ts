// /v1/health/* (spec "Health"; consul-behaviour §5.4).
import { Type } from '@sinclair/typebox';
import { nodeMeta } from '../query-options';
import { route, type Route } from '../route';
import { ReadOptionsQuery, readQuery } from '../../schemas/query-options';
import { List, RequiredText, RequiredWords, Words } from '../../schemas/query-fields';
import { nearOf, readInto, type RouteDeps } from './deps';
import { readMaybeCached } from '../cached-read';

const NODE_PARAMS = Type.Object({ node: RequiredText('Missing node name') });
const SERVICE_PARAMS = Type.Object({ service: RequiredText('Missing service name') });
// DECISIONS.md: an unknown state is a client error (Consul answers []).
const STATE_PARAMS = Type.Object({
  state: RequiredWords(
    { any: 'any', passing: 'passing', warning: 'warning', critical: 'critical' } as const,
    (state?: string) => (state ? `Invalid check state "${state}": must be any, passing, warning or critical` : 'Missing check state'),
  ),
});
/** `?passing`, `?passing=`, `?passing=true|1|t` filter; `false|0|f` do not (any case); anything else is 400. */
const SERVICE_QUERY = readQuery({
  tag: List(),
  passing: Words({ '': true, true: true, '1': true, t: true, false: false, '0': false, f: false }, 'Invalid value for ?passing', true),
});

export function healthRoutes(deps: RouteDeps): Route<any>[] {
  return [
    route({
      method: 'GET',
      path: '/v1/health/node{/:node}',
      params: NODE_PARAMS,
      handle: (ctx) => readInto(deps, ctx, 'health.node', { node: ctx.params.node }),
    }),
    route({
      method: 'GET',
      path: '/v1/health/checks{/:service}',
      query: ReadOptionsQuery,
      params: SERVICE_PARAMS,
      handle(ctx) {
        return readInto(deps, ctx, 'health.checks', {
          service: ctx.params.service,
          nodeMeta: nodeMeta(ctx.query['node-meta']),
          near: nearOf(ctx, deps),
        });
      },
    }),
    ...(['service', 'connect'] as const).map((kind) =>
      route({
        method: 'GET',
        path: `/v1/health/${kind}{/:service}`,
        query: SERVICE_QUERY,
        params: SERVICE_PARAMS,
        handle(ctx) {
          return readMaybeCached(deps, ctx, 'health.service', {
            service: ctx.params.service,
            tags: ctx.query.tag ?? [],
            nodeMeta: nodeMeta(ctx.query['node-meta']),
            passing: ctx.query.passing ?? false,
            near: nearOf(ctx, deps),
            connect: kind === 'connect',
          });
        },
      }),
    ),
    route({
      method: 'GET',
      path: '/v1/health/state{/:state}',
      query: ReadOptionsQuery,
      params: STATE_PARAMS,
      handle(ctx) {
        return readInto(deps, ctx, 'health.state', { state: ctx.params.state, nodeMeta: nodeMeta(ctx.query['node-meta']), near: nearOf(ctx, deps) });
      },
    }),
  ];
}
