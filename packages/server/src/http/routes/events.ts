// User events: PUT /v1/event/fire/:name and GET /v1/event/list (Consul 1.4). A fired event is
// replicated through Raft into every server's event ring; each agent lists the events it delivers
// (its node and services match the filters) from its own copy (docs/events.md).
import { Authorizer } from '@registry/acl';
import type { EventOut } from '@registry/store';
import { deliveredHere, eventToFire, type LocalServiceFacts } from '../../events/user-events';
import { route, type Route } from '../route';
import { readQuery, writeQuery } from '../../schemas/query-options';
import { Text } from '../../schemas/query-fields';
import type { RouteDeps } from './deps';
import { eventIndex, exactIndexParam } from '../../events/event-index';
import { effectiveWait } from '../../rpc/blocking';
import { monotonicMs } from '../../time';

/** Which agents deliver a fired event: by node, service and tag (regular expressions). */
const FIRE_QUERY = writeQuery({ node: Text(), service: Text(), tag: Text() });
const LIST_QUERY = readQuery({ name: Text() });

export function eventRoutes(deps: RouteDeps): Route<any>[] {
  const localServices = (): LocalServiceFacts[] => {
    const all = deps.local.listServices(Authorizer.allowAll()) as Record<string, { ID: string; Service: string; Tags?: string[] | null }>;
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
        // Blocking as Consul's agent blocks it (events/event-index.ts): while the listed events'
        // index equals the client's, wait for the ring to change (a Raft-index wait), then list again.
        const wanted = exactIndexParam(ctx.rawQuery);
        const deadline = monotonicMs() + effectiveWait(ctx.opts.waitMs);
        const signal = wanted > 0n ? ctx.signal : undefined;
        let ringIndex = 0;
        for (;;) {
          const remaining = deadline - monotonicMs();
          const reply = await deps.rpc.read('event.list', { name: ctx.query.name ?? '' }, { ...ctx.opts, minIndex: ringIndex, waitMs: Math.max(1, remaining) }, signal);
          const services = localServices();
          const events = reply.result.value.filter((e) => deliveredHere(e, deps.agent.nodeName, services));
          const index = eventIndex(events.at(-1)?.ID);
          ctx.meta.knownLeader = reply.meta.knownLeader;
          ctx.meta.lastContactMs = reply.meta.lastContactMs;
          if (index !== wanted || signal?.aborted || deadline - monotonicMs() <= 0) {
            ctx.meta.headers['X-Registry-Index'] = index.toString();
            return events;
          }
          // Never 0: a read with index 0 does not block, and this loop would spin on the event loop.
          ringIndex = Math.max(1, reply.result.index);
        }
      },
    }),
  ];
}
