// What happens when a session ends (destroyed, expired, or invalidated by its node or checks):
// Consul's deleteSessionTxn. Locks it holds are released (or the keys deleted with
// Behavior=delete), each such key gets a lock-delay, and prepared queries bound to it are deleted.
// It spans the sessions, KV and prepared-query tables, and runs inside the apply that ended the
// session, so every server does the same at the same Raft index.
import { NODE_PREFIX } from '../catalog/keys';
import type { State } from '../state';
import type { Txn } from '../txn';
import { MAX_LOCK_DELAY_NS } from './session-records';

export function destroySession(state: State, id: string, txn: Txn): boolean {
  const rec = state.sessions.delete(id, txn);
  if (!rec) return false;
  const delayMs = Math.min(rec.LockDelay, MAX_LOCK_DELAY_NS) / 1e6;
  for (const key of state.kv.heldBy(rec.ID)) {
    const entry = state.kv.get(key);
    if (!entry) continue;
    if (rec.Behavior === 'delete') state.kv.delete(key, txn);
    else state.kv.put({ Key: entry.Key, Flags: entry.Flags, Value: entry.Value, LockIndex: entry.LockIndex, Session: '' }, txn);
    if (delayMs > 0) state.kv.setLockDelay(key, txn.appliedAt + delayMs);
  }
  for (const q of state.queries.boundTo(rec.ID)) state.queries.delete(q.ID, txn);
  return true;
}

/**
 * Sessions whose node is gone, or one of whose checks is gone or critical, after a write: only the
 * nodes the write touched are looked at (every catalog change to a node, its checks or its services
 * bumps that node's watch key).
 */
export function invalidateAfterCatalogChange(state: State, txn: Txn): void {
  const nodes: string[] = [];
  for (const key of txn.bumped) if (key.startsWith(NODE_PREFIX)) nodes.push(key.slice(NODE_PREFIX.length));
  for (const nodeKey of nodes) {
    for (const s of state.sessions.ofNode(nodeKey)) {
      if (!sessionStillValid(state, s.Node, s.Checks)) destroySession(state, s.ID, txn);
    }
  }
}

function sessionStillValid(state: State, node: string, checks: string[] | null): boolean {
  if (!state.catalog.node(node)) return false;
  for (const id of checks ?? []) {
    const c = state.catalog.check(node, id);
    if (!c || c.Status === 'critical') return false;
  }
  return true;
}
