// /v1/health/* (spec "Health"; consul-behaviour §5.4).
import { badRequest } from '../../errors';
import { list, nodeMeta, single } from '../query-options';
import { route, type Route, type RouteContext } from '../route';
import { nearOf, readInto, type RouteDeps } from './deps';
import { readMaybeCached } from '../cached-read';

const STATES = new Set(['any', 'passing', 'warning', 'critical']);

/** `?passing`, `?passing=`, `?passing=true|1|t` filter; `false|0|f` do not; anything else is 400. */
function passingFlag(ctx: RouteContext): boolean {
  if (ctx.query.passing === undefined) return false;
  const v = (single(ctx.query, 'passing') ?? '').toLowerCase();
  if (v === '' || v === 'true' || v === '1' || v === 't') return true;
  if (v === 'false' || v === '0' || v === 'f') return false;
  throw badRequest('Invalid value for ?passing');
}

export function healthRoutes(deps: RouteDeps): Route<any>[] {
  return [
    route({
      method: 'GET',
      path: '/v1/health/node{/:node}',
      handle(ctx) {
        if (!ctx.params.node) throw badRequest('Missing node name');
        return readInto(deps, ctx, 'health.node', { node: ctx.params.node });
      },
    }),
    route({
      method: 'GET',
      path: '/v1/health/checks{/:service}',
      handle(ctx) {
        if (!ctx.params.service) throw badRequest('Missing service name');
        return readInto(deps, ctx, 'health.checks', {
          service: ctx.params.service,
          nodeMeta: nodeMeta(ctx.query),
          near: nearOf(ctx, deps),
        });
      },
    }),
    ...(['service', 'connect'] as const).map((kind) =>
      route({
        method: 'GET',
        path: `/v1/health/${kind}{/:service}`,
        handle(ctx) {
          if (!ctx.params.service) throw badRequest('Missing service name');
          return readMaybeCached(deps, ctx, 'health.service', {
            service: ctx.params.service,
            tags: list(ctx.query, 'tag'),
            nodeMeta: nodeMeta(ctx.query),
            passing: passingFlag(ctx),
            near: nearOf(ctx, deps),
            connect: kind === 'connect',
          });
        },
      }),
    ),
    route({
      method: 'GET',
      path: '/v1/health/state{/:state}',
      handle(ctx) {
        const state = ctx.params.state;
        if (!state) throw badRequest('Missing check state');
        // DECISIONS.md: an unknown state is a client error (Consul answers []).
        if (!STATES.has(state)) throw badRequest(`Invalid check state "${state}": must be any, passing, warning or critical`);
        return readInto(deps, ctx, 'health.state', { state, nodeMeta: nodeMeta(ctx.query), near: nearOf(ctx, deps) });
      },
    }),
  ];
}
