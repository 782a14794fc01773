// The store as Raft's state machine: bytes in, decoded entries applied in log order (a stamped
// entry carries its request id, which the store uses to apply each request once).
import type { SnapshotMeta, StateMachine } from '@registry/raft';
import { decodeEntry, type Store } from '@registry/store';

export function storeStateMachine(store: Store): StateMachine {
  return {
    apply: (index: number, data: Uint8Array) => {
      const { cmd, request } = decodeEntry(data);
      return store.apply(index, cmd, request);
    },
    // A point-in-time handle: the driver persists it in slices while later entries are applied.
    snapshot: () => store.openSnapshot(),
    restore: (data: Uint8Array, _meta: SnapshotMeta) => store.restore(data),
  };
}
