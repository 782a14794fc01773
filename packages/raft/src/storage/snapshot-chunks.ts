// Helpers for snapshots kept as pieces (interfaces.ts SnapshotData): cutting bytes into pieces of a
// bounded size without copying, and joining them back when something needs the whole (a restore).
import type { SnapshotData } from '../interfaces';

/**
 * Largest piece a snapshot is stored or sent in. A piece is a short-lived buffer: 1 MiB keeps each
 * one far below V8's 64 MiB external-memory step that starts a major GC (see docs/benchmarks/history.md,
 * "Snapshots"), and a transfer's frame small enough not to hold up heartbeats on the same link.
 */
export const SNAPSHOT_CHUNK_BYTES = 1 << 20;

/** `data` as pieces of at most `max` bytes (views, no copy); empty pieces are left out. */
export function* snapshotPieces(data: SnapshotData, max = SNAPSHOT_CHUNK_BYTES): Generator<Uint8Array> {
  const list = data instanceof Uint8Array ? [data] : data;
  for (const chunk of list) {
    for (let at = 0; at < chunk.length; at += max) yield chunk.subarray(at, Math.min(chunk.length, at + max));
  }
}

/** Total bytes of `data`. */
export function snapshotSize(data: SnapshotData): number {
  if (data instanceof Uint8Array) return data.length;
  let n = 0;
  for (const c of data) n += c.length;
  return n;
}

/** The bytes in one buffer (the one piece itself when there is only one). */
export function joinSnapshot(data: SnapshotData): Uint8Array {
  if (data instanceof Uint8Array) return data;
  if (data.length === 1) return data[0];
  return Buffer.concat(data as Uint8Array[], snapshotSize(data));
}
