// User events: PUT /v1/event/fire/:name and GET /v1/event/list (Consul 1.4). A fired event is
// replicated through Raft into every server's event ring; each agent lists the events it delivers
// (its node and services match the filters) from its own copy (docs/events.md).
import { Authorizer } from '@registry/acl';
import type { EventOut } from '@registry/store';
import { deliveredHere, eventToFire, type LocalServiceFacts } from '../../events/user-events';
import { route, type Route } from '../route';
import { readQuery, writeQuery } from '../../schemas/query-options';
import { Text } from '../../schemas/query-fields';
import { readInto, type RouteDeps } from './deps';

/** Which agents deliver a fired event: by node, service and tag (regular expressions). */
const FIRE_QUERY = writeQuery({ node: Text(), service: Text(), tag: Text() });
const LIST_QUERY = readQuery({ name: Text() });

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
      query: FIRE_QUERY,
      async handle(ctx) {
        const event = eventToFire({
          name: ctx.params.name ?? '',
          payload: ctx.rawBody,
          node: ctx.query.node ?? '',
          service: ctx.query.service ?? '',
          tag: ctx.query.tag ?? '',
        });
        const { opts, clientGone } = ctx;
        return (await deps.rpc.apply({ type: 'event.fire', event }, { datacenter: opts.datacenter, token: opts.token, clientGone })) as EventOut;
      },
    }),
    route({
      method: 'GET',
      path: '/v1/event/list',
      query: LIST_QUERY,
      async handle(ctx) {
        // The agent's own copy of the ring, never another datacenter's: the endpoint's policy (`local`).
        const events = await readInto(deps, ctx, 'event.list', { name: ctx.query.name ?? '' });
        const services = localServices();
        return events.filter((e) => deliveredHere(e, deps.agent.nodeName, services));
      },
    }),
  ];
}
