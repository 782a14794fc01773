// Where the bytes of log entries live once they reach this server: a leader's proposals (copied
// into one buffer per batch, proposal-queue.ts) and the entries a follower receives (copied out of
// their frame, ownEntryBytes). They are cut from large SharedArrayBuffer chunks, one after the other
// (issue #34).
//
// An entry's bytes outlive the entry. The state machine keeps views into them: a KV value stays a
// view into the entry that wrote it (the store's kv/value-arenas.ts adopts it), so the log and the
// table share one copy. Allocated one buffer per batch or frame, those bytes were malloc chunks of
// a few KB to 1 MB in glibc's heap, and once a restore (or overwrites) freed them glibc kept their
// pages: a server held 1.6–2.2× its state after a `snapshot restore`. A chunk this large is
// mapped by glibc on its own (its largest dynamic mmap threshold is 32 MiB), resident only as far
// as it is written, and unmapped when the last view into it is collected.
//
// SharedArrayBuffers because V8 leaves their memory out of the count that starts a mark-compact
// (an ArrayBuffer's counts): the entries are already the bulk of what a write allocates, and the
// store's restore arenas are SharedArrayBuffers for the same reason. It is also how the store knows
// a value it may keep as it is. The first chunk is small and each next one twice the last, up to
// ENTRY_CHUNK_BYTES: a process that writes little (a test's) holds little address space.

import type { Entry } from './core/types';

/** The largest chunk's size. */
export const ENTRY_CHUNK_BYTES = 32 << 20;
/** The first chunk's size. */
const FIRST_CHUNK_BYTES = 1 << 20;
/** Larger requests get a buffer of their own: a chunk holds at least eight. */
const MAX_IN_CHUNK = ENTRY_CHUNK_BYTES >> 3;

let chunk: Uint8Array | undefined;
let used = 0;

/** `n` zeroed bytes in the current chunk (a new one when it is full), for bytes a log entry will keep. */
export function entryBytes(n: number): Uint8Array {
  if (n > MAX_IN_CHUNK) return new Uint8Array(n);
  if (!chunk || used + n > chunk.byteLength) {
    const size = Math.min(ENTRY_CHUNK_BYTES, Math.max(FIRST_CHUNK_BYTES, 2 * (chunk?.byteLength ?? 0), n));
    chunk = new Uint8Array(new SharedArrayBuffer(size));
    used = 0;
  }
  const out = chunk.subarray(used, used + n);
  used += n;
  return out;
}

/**
 * The items' bytes copied into one piece of entryBytes() of exactly their size, a view of it for
 * each: what was a view into a larger buffer (msgpackr's working buffer, a frame holding the rest of
 * a message) no longer keeps that buffer alive. One copy per batch, not per item: a batch is
 * compacted from the log together.
 */
export function ownBytes(items: readonly { data: Uint8Array }[]): Uint8Array[] {
  let size = 0;
  for (const item of items) size += item.data.byteLength;
  const all = size === 0 ? new Uint8Array(0) : entryBytes(size); // nothing to keep a chunk alive for
  const out: Uint8Array[] = new Array(items.length);
  let at = 0;
  for (let i = 0; i < items.length; i++) {
    const data = items[i].data;
    all.set(data, at);
    out[i] = all.subarray(at, at + data.byteLength);
    at += data.byteLength;
  }
  return out;
}

/**
 * A follower's entries with their bytes owned (ownBytes): they arrive as views into the frame that
 * brought them. New entry objects: an in-process transport hands over the sender's own.
 */
export function ownEntryBytes(entries: Entry[]): void {
  const data = ownBytes(entries);
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    entries[i] = { term: e.term, index: e.index, type: e.type, data: data[i] };
  }
}
