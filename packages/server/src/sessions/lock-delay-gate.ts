// Lock-delay is checked on the leader just before a lock is proposed (as in Consul's KVS.Apply):
// it is wall-clock state each server keeps for itself, so it must not be decided inside the
// replicated apply, where servers applying at different moments could disagree.
import type { Command, Store, TxnReply } from '@registry/store';

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
