// Session reads (spec "Sessions"; consul-behaviour §3.2, §2.10): sessions on nodes the token may not
// read are left out (info of such a session answers null, as for an unknown one).
import type { SessionRecord } from '@registry/store';
import { forbidden } from '../errors';
import type { ReadEndpoint } from './read-context';

export const sessionReads = {
  'session.info': ({ store, authz }, a: { id: string }) => {
    const r = store.sessionInfo(a.id);
    const visible = r.value?.filter((s) => authz.sessionRead(s.Node)) ?? [];
    return { ...r, value: visible.length > 0 ? visible : null };
  },
  'session.node': ({ store, authz }, a: { node: string }) => {
    // The path names the node by name or ID (spec; as /v1/health/node does): an ID is read as its node's name.
    const r = store.sessionsOfNode(store.catalogNode(a.node).value?.Node.Node ?? a.node);
    return { ...r, value: r.value.filter((s) => authz.sessionRead(s.Node)) };
  },
  'session.list': ({ store, authz }) => {
    const r = store.sessionList();
    return { ...r, value: r.value.filter((s) => authz.sessionRead(s.Node)) };
  },
  /** Renew runs on the leader: it answers the session (or null) after checking session:write. */
  'session.renew': ({ store, authz }, a: { id: string }) => {
    const r = store.sessionInfo(a.id);
    const s: SessionRecord | undefined = r.value?.[0];
    if (s && !authz.sessionWrite(s.Node)) throw forbidden();
    return r;
  },
} satisfies Record<string, ReadEndpoint>;
