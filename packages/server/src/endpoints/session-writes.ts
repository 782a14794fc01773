// The session endpoint's leader-side ACL checks (consul-behaviour §2.9): session:write on the
// session's node.
import type { Authorizer } from '@registry/acl';
import type { Store } from '@registry/store';
import { forbidden } from '../errors';

export function authorizeSessionCreate(node: string, authz: Authorizer): void {
  if (!authz.sessionWrite(node)) throw forbidden();
}

/** Destroying an unknown session is a no-op anyone may ask for. */
export function authorizeSessionDestroy(id: string, authz: Authorizer, store: Store): void {
  const s = store.sessionInfo(id).value?.[0];
  if (s && !authz.sessionWrite(s.Node)) throw forbidden();
}
