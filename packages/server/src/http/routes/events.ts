// User events: PUT /v1/event/fire/:name and GET /v1/event/list (Consul 1.4). A fired event is
// replicated through Raft into every server's event ring; each agent lists the events it delivers
// (its node and services match the filters) from its own copy (docs/events.md).
import { Authorizer } from '@registry/acl';
import type { EventOut } from '@registry/store';
import { deliveredHere, eventToFire, type LocalServiceFacts } from '../../events/user-events';
import { badRequest } from '../../errors';
import { single } from '../query-options';
import { route, type Route } from '../route';
import { readInto, type RouteDeps } from './deps';

export function eventRoutes(deps: RouteDeps): Route<any>[] {
  const localServices = (): LocalServiceFacts[] => {
    if (!deps.mesh) return [];
    const all = deps.mesh.listServices(Authorizer.allowAll()) as Record<string, { ID: string; Service: string; Tags?: string[] | null }>;
    return Object.values(all).map((s) => ({ ID: s.ID, Service: s.Service, Tags: s.Tags ?? [] }));
  };
  return [
    route({
      method: 'PUT',
      path: '/v1/event/fire{/:name}',
      async handle(ctx) {
        const event = eventToFire({
          name: ctx.params.name ?? '',
          payload: ctx.rawBody,
          node: single(ctx.query, 'node') ?? '',
          service: single(ctx.query, 'service') ?? '',
          tag: single(ctx.query, 'tag') ?? '',
        });
        const { opts, clientGone } = ctx;
        return (await deps.rpc.apply({ type: 'event.fire', event }, { datacenter: opts.datacenter, token: opts.token, clientGone })) as EventOut;
      },
    }),
    route({
      method: 'GET',
      path: '/v1/event/list',
      async handle(ctx) {
        if (ctx.opts.datacenter !== deps.agent.datacenter) throw badRequest('event list is local to the agent: dc is not supported');
        // The agent's own copy of the ring, as Consul's agent answers from its own event buffer.
        const local = { ...ctx, opts: { ...ctx.opts, consistency: 'stale' as const } };
        const events = await readInto<EventOut[]>(deps, local, 'event.list', { name: single(ctx.query, 'name') ?? '' });
        const services = localServices();
        return events.filter((e) => deliveredHere(e, deps.agent.nodeName, services));
      },
    }),
  ];
}
