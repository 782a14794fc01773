// The user-event ring as this server holds it: only the events the token may read (event:read on
// the name), optionally of one name. Which of them this agent delivers is decided at the edge.
import type { EventOut } from '@registry/store';
import { read, type ReadEndpoint } from './read-context';

export const eventReads = {
  'event.list': read({
    // The agent answers from its own copy of the ring, as Consul's agent from its event buffer.
    forward: 'local',
    run: ({ store, authz }, a: { name?: string }) => {
      const r = store.eventList(a.name || undefined);
      return { ...r, value: r.value.filter((e: EventOut) => authz.eventRead(e.Name)) };
    },
  }),
} satisfies Record<string, ReadEndpoint>;
