// Intention reads (spec "Intentions"; consul-behaviour §6, ACL rules §2.9–2.10): lists filter by
// `intentions:read` on the destination, single objects and match answer 403.
import type { MatchEntry, MatchSide } from '@registry/store';
import { forbidden } from '../errors';
import { read, type ReadEndpoint } from './read-context';

export const intentionReads = {
  'intention.list': read({
    run: ({ store, authz }) => {
      const r = store.intentionList();
      if (authz.aclRead()) return r;
      return { ...r, value: r.value.filter((i) => authz.intentionRead(i.DestinationName)) };
    },
  }),
  'intention.get': read({
    run: ({ store, authz }, a: { id: string }) => {
      const r = store.intentionGet(a.id);
      if (r.value && !authz.intentionRead(r.value.DestinationName)) throw forbidden();
      return r;
    },
  }),
  'intention.match': read({
    blocking: false, // spec: match does not block
    run: ({ store, authz }, a: { by: MatchSide; entries: MatchEntry[] }) => {
      for (const e of a.entries) if (!authz.intentionRead(e.name)) throw forbidden();
      return store.intentionMatch(a.by, a.entries);
    },
  }),
  /**
   * The destination's intentions for a check/authorize decision; needs only `service:read` on it.
   * Blocking (the ordinary read), unlike the HTTP check: the agent cache keeps authorize's answers
   * fresh with blocking fetches of it (connect/agent-connect.ts), as Consul's cache does with Intention.Match.
   */
  'intention.check': read({
    run: ({ store, authz }, a: { destination: MatchEntry }) => {
      if (!authz.serviceRead(a.destination.name)) throw forbidden();
      const r = store.intentionMatch('destination', [a.destination]);
      return { ...r, value: r.value[0] ?? [] };
    },
  }),
} satisfies Record<string, ReadEndpoint>;
