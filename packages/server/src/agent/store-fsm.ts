// The store as Raft's state machine: bytes in, decoded entries applied in log order (a stamped
// entry carries its request id, which the store uses to apply each request once).
import { performance } from 'node:perf_hooks';
import type { SnapshotMeta, SnapshotSource, StateMachine } from '@registry/raft';
import { decodeEntry, type Store } from '@registry/store';
import { scavengeAbove, RESTORE_YOUNG_BYTES } from './young-generation';

/** Told how long each command took to apply, by command type (the metrics' FSM timers). */
export type ApplyTimer = (type: string, ms: number) => void;

export function storeStateMachine(store: Store, timed?: ApplyTimer): StateMachine {
  return {
    apply: (index: number, data: Uint8Array) => {
      const { cmd, request } = decodeEntry(data);
      if (!timed) return store.apply(index, cmd, request);
      const started = performance.now();
      const result = store.apply(index, cmd, request);
      timed(cmd.type, performance.now() - started);
      return result;
    },
    // A point-in-time handle: the driver persists it in slices while later entries are applied.
    snapshot: () => store.openSnapshot(),
    restore: (data: Uint8Array, _meta: SnapshotMeta) => store.restore(data),
    // A restart's or an install's snapshot, decoded into the tables a piece at a time (issue #34),
    // with the young generation emptied between steps (young-generation.ts, scavengeAbove).
    restoreFrom: (source: SnapshotSource, _meta: SnapshotMeta) => store.restoreFrom(source, { afterStep: scavengeAbove(RESTORE_YOUNG_BYTES) }),
  };
}
