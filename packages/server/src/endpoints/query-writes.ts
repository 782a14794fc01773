// The prepared-query endpoint's leader-side checks (Consul's PreparedQuery.Apply; its reads are in
// query-reads.ts): query:write on the Name of the new definition and of the one it replaces
// (consul-behaviour §2.9, §4.7). Unnamed static queries have no prefix: anyone may write them (they
// must be bound to a session). Templates are checked on their Name, '' included.
import type { Authorizer } from '@registry/acl';
import { isTemplate, type QueryDefinition, type Store } from '@registry/store';
import { forbidden } from '../errors';

function mayWrite(q: Pick<QueryDefinition, 'Name' | 'Template'>, authz: Authorizer): boolean {
  if (q.Name === '' && !isTemplate(q)) return true;
  return authz.queryWrite(q.Name);
}

export function authorizeQuerySet(q: QueryDefinition, authz: Authorizer, store: Store): void {
  if (!mayWrite(q, authz)) throw forbidden();
  const existing = store.queryGet(q.ID).value;
  if (existing && !mayWrite(existing, authz)) throw forbidden();
}

export function authorizeQueryDelete(id: string, authz: Authorizer, store: Store): void {
  const existing = store.queryGet(id).value;
  if (existing && !mayWrite(existing, authz)) throw forbidden();
}
