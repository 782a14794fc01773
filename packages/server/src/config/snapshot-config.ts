// Config of backups (docs/operations.md "Backups"): `snapshot_restore_max_bytes`, the largest
// archive a `PUT /v1/snapshot` may send (a larger one is refused with 413 as soon as it is seen to
// be larger; nothing of it is kept). It also bounds the state the archive unpacks to, beyond the
// default 256 MiB (snapshot/archive.ts MAX_STATE_BYTES): a gzipped state is smaller than the state.

export interface SnapshotConfig {
  restoreMaxBytes: number;
}

export const DEFAULT_RESTORE_MAX_BYTES = 256 * 1024 * 1024;

export function defaultSnapshotConfig(): SnapshotConfig {
  return { restoreMaxBytes: DEFAULT_RESTORE_MAX_BYTES };
}

export function applySnapshotConfig(out: SnapshotConfig, file: Record<string, unknown>, source: string): void {
  const v = file.snapshot_restore_max_bytes;
  if (v === undefined) return;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1024) throw new Error(`${source}: snapshot_restore_max_bytes must be a number of bytes of at least 1024`);
  out.restoreMaxBytes = v;
}
