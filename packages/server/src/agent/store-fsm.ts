// The store as Raft's state machine: bytes in, decoded commands applied in log order.
import type { SnapshotMeta, StateMachine } from '@registry/raft';
import { decodeCommand, type Store } from '@registry/store';

export function storeStateMachine(store: Store): StateMachine {
  return {
    apply: (index: number, data: Uint8Array) => store.apply(index, decodeCommand(data)),
    snapshot: () => store.snapshot(),
    restore: (data: Uint8Array, _meta: SnapshotMeta) => store.restore(data),
  };
}
