// Session reads (spec "Sessions"; consul-behaviour §3.2, §2.10): sessions on nodes the token may not
// read are left out (info of such a session answers null, as for an unknown one).
import type { SessionRecord } from '@registry/store';
import type { Authorizer } from '@registry/acl';
import { forbidden } from '../errors';
import { read, type ReadEndpoint } from './read-context';

export const sessionReads = {
  'session.info': read({
    run: ({ store, authz }, a: { id: string }) => {
      const r = store.sessionInfo(a.id);
      const visible = r.value?.filter((s) => authz.sessionRead(s.Node)) ?? [];
      return { ...r, value: visible.length > 0 ? visible : null };
    },
  }),
  'session.node': read({
    run: ({ store, authz }, a: { node: string }) => {
      // The path names the node by name or ID (spec; as /v1/health/node does): an ID is read as its node's name.
      const r = store.sessionsOfNode(store.catalogNode(a.node).value?.Node.Node ?? a.node);
      return { ...r, value: r.value.filter((s) => authz.sessionRead(s.Node)) };
    },
  }),
  'session.list': read({
    run: ({ store, authz }) => {
      const r = store.sessionList();
      return { ...r, value: r.value.filter((s) => authz.sessionRead(s.Node)) };
    },
  }),
  /**
   * Renew's check: the session (or null) after checking session:write; the route then restarts its
   * TTL timer on the leader. Read with the leader's state whatever ?stale asks (Consul forwards
   * Session.Renew), and never blocking (spec).
   */
  'session.renew': read({
    forward: 'leader',
    blocking: false,
    run: ({ store, authz }, a: { id: string }) => {
      const r = store.sessionInfo(a.id);
      if (!mayRenew(authz, r.value?.[0])) throw forbidden();
      return r;
    },
  }),
} satisfies Record<string, ReadEndpoint>;

/**
 * Whether `authz` may renew `session` (session:write on its node); an unknown session is not refused
 * here (it answers 404 or nothing). Shared by the renew read and the leader call Session.Renew
 * (leader-call-acl.ts), so a renewal is checked alike however it arrives.
 */
export function mayRenew(authz: Authorizer, session: SessionRecord | undefined): boolean {
  return !session || authz.sessionWrite(session.Node);
}
