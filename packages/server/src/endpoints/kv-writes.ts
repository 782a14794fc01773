// The KV endpoint's leader-side checks (Consul's KVS.Apply, before raftApply): the ACL of each op —
// key:write on written keys, key:read on keys a transaction reads, write on the whole subtree for a
// recursive delete (consul-behaviour §2.9) — and lock-delay. Lock-delay is wall-clock state each
// server keeps for itself, so it is decided here, on the leader just before proposing, never inside
// the replicated apply where servers applying at different moments could disagree.
import type { Authorizer } from '@registry/acl';
import { KV_READ_VERBS, type Command, type KvOp, type Store, type TxnReply } from '@registry/store';
import { forbidden } from '../errors';

export function kvOpAllowed(op: Pick<KvOp, 'Verb' | 'Key'>, authz: Authorizer): boolean {
  if (op.Verb === 'delete-tree') return authz.keyWritePrefix(op.Key);
  if (KV_READ_VERBS.has(op.Verb)) return authz.keyRead(op.Key);
  return authz.keyWrite(op.Key);
}

export function authorizeKvOps(ops: readonly Pick<KvOp, 'Verb' | 'Key'>[], authz: Authorizer): void {
  if (!Array.isArray(ops)) return; // the state machine refuses the malformed command
  for (const op of ops) if (!kvOpAllowed(op, authz)) throw forbidden();
}

/** The answer for a command refused by lock-delay, or undefined to go ahead and propose it. */
export function lockDelayVerdict(cmd: Command, store: Store): unknown {
  if (cmd.type === 'kv.apply') {
    return cmd.op.Verb === 'lock' && store.kvLockDelayed(cmd.op.Key) ? false : undefined;
  }
  if (cmd.type === 'kv.txn' && Array.isArray(cmd.ops)) {
    const i = cmd.ops.findIndex((op) => op.Verb === 'lock' && store.kvLockDelayed(op.Key));
    if (i < 0) return undefined;
    const reply: TxnReply = { Results: null, Errors: [{ OpIndex: i, What: `failed to lock key ${JSON.stringify(cmd.ops[i].Key)}: lock-delay in effect` }] };
    return reply;
  }
  if (cmd.type === 'txn' && Array.isArray(cmd.ops)) {
    const i = cmd.ops.findIndex((op) => 'KV' in op && op.KV?.Verb === 'lock' && store.kvLockDelayed(op.KV.Key));
    if (i < 0) return undefined;
    const key = (cmd.ops[i] as { KV: { Key: string } }).KV.Key;
    const reply: TxnReply = { Results: null, Errors: [{ OpIndex: i, What: `failed to lock key ${JSON.stringify(key)}: lock-delay in effect` }] };
    return reply;
  }
  return undefined;
}
