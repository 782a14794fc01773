// ACL checks of the session and KV commands (consul-behaviour §2.9), called from authorizeCommand on
// the leader: session:write on the session's node; key:write on written keys, key:read on keys a
// transaction reads, and write on the whole subtree for a recursive delete.
import type { Authorizer } from '@registry/acl';
import { KV_READ_VERBS, type KvOp, type Store } from '@registry/store';
import { forbidden } from '../errors';

export function authorizeSessionCreate(node: string, authz: Authorizer): void {
  if (!authz.sessionWrite(node)) throw forbidden();
}

/** Destroying an unknown session is a no-op anyone may ask for. */
export function authorizeSessionDestroy(id: string, authz: Authorizer, store: Store): void {
  const s = store.sessionInfo(id).value?.[0];
  if (s && !authz.sessionWrite(s.Node)) throw forbidden();
}

export function kvOpAllowed(op: Pick<KvOp, 'Verb' | 'Key'>, authz: Authorizer): boolean {
  if (op.Verb === 'delete-tree') return authz.keyWritePrefix(op.Key);
  if (KV_READ_VERBS.has(op.Verb)) return authz.keyRead(op.Key);
  return authz.keyWrite(op.Key);
}

export function authorizeKvOps(ops: readonly Pick<KvOp, 'Verb' | 'Key'>[], authz: Authorizer): void {
  if (!Array.isArray(ops)) return; // the state machine refuses the malformed command
  for (const op of ops) if (!kvOpAllowed(op, authz)) throw forbidden();
}
