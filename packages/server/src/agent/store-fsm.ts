// The store as Raft's state machine: bytes in, decoded entries applied in log order (a stamped
// entry carries its request id, which the store uses to apply each request once).
import { performance } from 'node:perf_hooks';
import { NotReady, type SnapshotMeta, type SnapshotSource, type StateMachine } from '@registry/raft';
import { decodeEntry, type Command, type Store } from '@registry/store';
import { STAGED_KEY } from '../snapshot/restore-staging';
import { scavengeAbove, RESTORE_YOUNG_BYTES } from './young-generation';

/** Told how long each command took to apply, by command type (the metrics' FSM timers). */
export type ApplyTimer = (type: string, ms: number) => void;

/** Restores staged on every server before their entry (snapshot/restore-staging.ts). */
export interface StagedRestores {
  /** Resolves once the state staged under `key` is loaded here (fetched from another server first if need be). */
  ensure(key: string, size: number): Promise<void>;
  /** Its entry was applied here at `index`. */
  applied(key: string, index: number): void;
}

type StagedRestore = Extract<Command, { type: 'snapshot.restore'; staged: string }>;

/** A staged restore's key and size as the proposer writes them; any other is refused by the store alike everywhere. */
const isStagedRestore = (cmd: Command): cmd is StagedRestore =>
  cmd.type === 'snapshot.restore' && 'staged' in cmd && typeof cmd.staged === 'string' && STAGED_KEY.test(cmd.staged) && Number.isSafeInteger(cmd.bytes) && cmd.bytes > 0;

/**
 * `replaced(index)`: a restore at `index` replaced the whole state, so the log's entries before it
 * are of no further use (the agent has Raft compact them: RaftNode.discardLogThrough).
 */
export function storeStateMachine(store: Store, timed?: ApplyTimer, staged?: () => StagedRestores | undefined, replaced?: (index: number) => void): StateMachine {
  return {
    apply: (index: number, data: Uint8Array) => {
      const { cmd, request } = decodeEntry(data);
      const restore = isStagedRestore(cmd) ? cmd : undefined;
      const restores = restore && staged?.();
      // A staged restore is applied only once its state is loaded here: Raft waits meanwhile
      // (NotReady), and this server falls behind for that time, as a slow one does; never without it.
      if (restore && restores && !store.hasPrepared(restore.staged)) return new NotReady(restores.ensure(restore.staged, restore.bytes));
      const started = timed ? performance.now() : 0;
      const result = store.apply(index, cmd, request);
      timed?.(cmd.type, performance.now() - started);
      if (cmd.type === 'snapshot.restore' && result === true) {
        if (restore) restores?.applied(restore.staged, index);
        replaced?.(index);
      }
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
