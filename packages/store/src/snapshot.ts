// The snapshot format: every table plus the index table and the last applied index, msgpack-encoded.
// `version` lets a later format be told apart from this one.
// Writing one without stalling the event loop is snapshot-stream.ts; the bytes are the same.
import { Packr } from 'msgpackr';
import { decodePieceSteps, decodeSteps, type PieceDecodeOptions, type PieceRequest } from './snapshot-decode';
import type { StateDump } from './state';

export interface SnapshotV1 {
  version: 1;
  lastIndex: number;
  indexes: [string, number][];
  state: StateDump;
}

const packr = new Packr({ useRecords: false });

export function encodeSnapshot(s: SnapshotV1): Uint8Array {
  return packr.pack(s);
}

/** Throws when the bytes are not a snapshot this version understands. */
export function decodeSnapshot(bytes: Uint8Array): SnapshotV1 {
  let s: unknown;
  try {
    s = packr.unpack(bytes);
  } catch (err) {
    throw new Error(`not a registry state snapshot: ${err instanceof Error ? err.message : String(err)}`);
  }
  return checkSnapshot(s);
}

/** decodeSnapshot() a step at a time (snapshot-decode.ts): the same value, or the same refusal. */
export function* decodeSnapshotSteps(bytes: Uint8Array): Generator<void, SnapshotV1, void> {
  let s: unknown;
  try {
    s = yield* decodeSteps(bytes);
  } catch (err) {
    throw new Error(`not a registry state snapshot: ${err instanceof Error ? err.message : String(err)}`);
  }
  return checkSnapshot(s);
}

/**
 * decodeSnapshotSteps() over bytes handed in a piece at a time (snapshot-decode.ts decodePieceSteps:
 * it yields MORE for the next piece): the same value, or the same refusal, without the whole bytes.
 */
export function* decodeSnapshotPieceSteps(opts: PieceDecodeOptions = {}): Generator<PieceRequest, SnapshotV1, Uint8Array | undefined> {
  let s: unknown;
  try {
    s = yield* decodePieceSteps(undefined, opts);
  } catch (err) {
    throw new Error(`not a registry state snapshot: ${err instanceof Error ? err.message : String(err)}`);
  }
  return checkSnapshot(s);
}

function checkSnapshot(decoded: unknown): SnapshotV1 {
  const s = decoded as Partial<SnapshotV1> | null;
  const version = (s as { version?: unknown } | null)?.version;
  if (typeof version === 'number' && version > 1) {
    // Written by a newer release (a newer leader's snapshot, a newer backup): said as such (issue #34).
    throw new Error(`registry state snapshot format version ${version} is newer than this registry reads (state snapshot version 1)`);
  }
  if (typeof s !== 'object' || s === null || s.version !== 1) throw new Error('not a registry state snapshot (version 1)');
  if (typeof s.lastIndex !== 'number' || !Array.isArray(s.indexes) || typeof s.state !== 'object' || s.state === null) {
    throw new Error('malformed registry state snapshot');
  }
  const { catalog, coordinates } = s.state;
  if (!catalog || !Array.isArray(catalog.nodes) || !Array.isArray(catalog.services) || !Array.isArray(catalog.checks)) {
    throw new Error('malformed registry state snapshot: catalog');
  }
  if (!coordinates || !Array.isArray(coordinates.coordinates)) throw new Error('malformed registry state snapshot: coordinates');
  return s as SnapshotV1;
}
