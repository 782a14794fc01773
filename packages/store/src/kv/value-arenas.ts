// Where the KV table keeps its values' bytes: in a few large buffers (arenas), not one allocation
// per value (issue #34).
//
// Restore arenas. A restore used to copy every value out of the snapshot's bytes into a buffer of
// its own. V8 starts a mark-compact of the whole heap for about every 64 MiB of new ArrayBuffer
// memory, so a restore of 1 GiB of 4 KiB values ran sixteen of them over a heap that grew to the
// whole state: half of a 4.7 s restart. Now a restore reads the stored snapshot into a few large
// buffers, each allocated as its read starts, and the table keeps its values as views into them.
// The arenas are SharedArrayBuffers, which V8 leaves out of that count altogether
// (snapshot-arenas.ts).
//
// Adopted arenas. A value a command writes arrives as a view into its Raft entry's bytes, which raft
// cuts from large SharedArrayBuffer chunks (raft's entry-bytes.ts): the table keeps it as it is, so
// the log and the table share one copy. Copied into an allocation of its own, a gigabyte of 4 KiB
// values was 262,144 malloc chunks in glibc's heap, and when a restore replaced them glibc kept
// their pages: a server held 1.6–2.2× the state after a `snapshot restore` over it.
//
// Write arenas. Any other value (a test's, one a restart replays from the WAL, one evacuated) is
// copied into the arena being written, an ArrayBuffer filled one value after another. The first is
// small and each next one twice the last, up to WRITE_ARENA_BYTES: glibc maps one that large on its
// own (its largest dynamic mmap threshold is 32 MiB) and unmaps it when it is freed, and its pages
// are resident only once written. Small first: a process with many small stores (a test run) held
// 32 MiB of address space per store, and fork() failed for want of it. An ArrayBuffer, not a
// SharedArrayBuffer: V8 counts its memory, so one no value points into any more is collected soon.
//
// The price, for both kinds: an arena is freed only when no value points into it. So the table
// counts, per arena, the bytes of the values it still stores there. Once they fall below KEEP of
// the arena (values overwritten or deleted), the values left are copied into the write arena a few
// MiB at a time (evacuate()) and the old arena goes: memory held for bytes no longer stored stays
// under half of what the arenas still store, plus the arena being written.
import type { KvEntry } from './kv-records';

/** An arena is emptied once the values stored in it are fewer bytes than this share of it. */
const KEEP = 2 / 3;
/** The largest write arena's size: mapped by glibc on its own (see above), its untouched pages cost nothing. */
export const WRITE_ARENA_BYTES = 32 << 20;
/** The first write arena's size; each next one is twice the last. */
const FIRST_WRITE_ARENA_BYTES = 64 << 10;
/** Larger values get an allocation of their own (malloc maps one this large by itself too). */
const MAX_VALUE_IN_ARENA = 1 << 20;
/** Keys evacuate() looks at per call at most, whatever they hold (most may have been overwritten already). */
const MAX_KEYS_PER_EVACUATE = 16_384;

interface Arena {
  /** Its size; for the write arena being filled, the bytes written so far. */
  bytes: number;
  /** Bytes of the values stored in it now. */
  live: number;
  /** The keys whose values were adopted into it, in load order; evacuate() walks them. */
  readonly keys: string[];
  /** How far evacuate() has walked `keys`. */
  cursor: number;
  due: boolean;
  /**
   * `restored`: a restore read it. `written`: values were copied into it. `adopted`: a buffer of
   * someone else's that values are views into (a log entry's, raft's entry-bytes.ts); its `bytes`
   * are the span from the first adopted value to the end of the last, what of it is known to be
   * written.
   */
  readonly kind: ArenaKind;
  from: number;
  to: number;
}

export type ArenaKind = 'restored' | 'written' | 'adopted';

/** The write arena being filled. */
interface Writing {
  readonly into: Uint8Array;
  readonly arena: Arena;
}

export class ValueArenas {
  /**
   * The restore's buffers, held weakly: one no value was adopted into is garbage as soon as the
   * decoder is past it (a state of catalog rows and few values keeps no arena).
   */
  private readonly candidates = new WeakSet<ArrayBufferLike>();
  /** Arenas holding at least one stored value. */
  private readonly byBuffer = new Map<ArrayBufferLike, Arena>();
  private readonly due: ArrayBufferLike[] = [];
  private writing: Writing | undefined;
  /** Called when an arena becomes due for evacuation (the store schedules evacuate()). */
  onDue: (() => void) | undefined;

  /** `buffer` is one of the restore's arenas. */
  add(buffer: Uint8Array): void {
    this.candidates.add(buffer.buffer);
  }

  /**
   * `v` as the table keeps it when it is a view into an arena (its bytes counted under `key`), or
   * undefined. An arena is one of the restore's, or any SharedArrayBuffer: in this process only
   * arenas are (the log's entry bytes, which a written value is a view into, are cut from them).
   */
  adopt(key: string, v: Uint8Array): Uint8Array | undefined {
    if (v.byteLength === 0) return new Uint8Array(0); // no bytes to count, and a view would keep the arena
    let arena = this.byBuffer.get(v.buffer);
    if (!arena) {
      const kind: ArenaKind = this.candidates.has(v.buffer) ? 'restored' : 'adopted';
      if (kind === 'adopted' && !(v.buffer instanceof SharedArrayBuffer)) return undefined;
      const bytes = kind === 'restored' ? v.buffer.byteLength : 0;
      arena = { bytes, live: 0, keys: [], cursor: 0, due: false, kind, from: v.byteOffset, to: v.byteOffset };
      this.byBuffer.set(v.buffer, arena);
    }
    if (arena.kind === 'adopted') {
      arena.from = Math.min(arena.from, v.byteOffset);
      arena.to = Math.max(arena.to, v.byteOffset + v.byteLength);
      arena.bytes = arena.to - arena.from;
    }
    arena.live += v.byteLength;
    arena.keys.push(key);
    // A plain Uint8Array, as a copied value is (the decoder's views are Buffers).
    return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  }

  /**
   * `v` copied into the write arena, counted under `key`: what the table stores for a value a
   * command wrote. The caller releases the value it replaces.
   */
  store(key: string, v: Uint8Array): Uint8Array {
    const n = v.byteLength;
    if (n === 0) return new Uint8Array(0);
    if (n > MAX_VALUE_IN_ARENA) return new Uint8Array(v);
    let w = this.writing;
    if (!w || w.arena.bytes + n > w.into.byteLength) w = this.openWriteArena(n);
    const at = w.arena.bytes;
    w.into.set(v, at);
    w.arena.bytes += n;
    w.arena.live += n;
    w.arena.keys.push(key);
    return new Uint8Array(w.into.buffer, at, n);
  }

  /** Once every value is adopted: arenas holding too little become due. */
  settle(): void {
    for (const [buffer, arena] of this.byBuffer) this.check(buffer, arena);
  }

  /** A stored value is stored no longer (overwritten by another value, or deleted). */
  released(v: Uint8Array | null): void {
    if (v === null) return;
    const arena = this.byBuffer.get(v.buffer);
    if (!arena) return;
    arena.live -= v.byteLength;
    this.check(v.buffer, arena);
  }

  /** Arenas of one kind still held, their bytes and the bytes of the values stored in them (tests, a restore's log line). */
  held(kind: ArenaKind = 'restored'): { arenas: number; bytes: number; liveBytes: number } {
    let arenas = 0;
    let bytes = 0;
    let liveBytes = 0;
    for (const a of this.byBuffer.values()) {
      if (a.kind !== kind) continue;
      arenas++;
      bytes += a.bytes;
      liveBytes += a.live;
    }
    return { arenas, bytes, liveBytes };
  }

  /**
   * Copies values out of due arenas into the write arena, up to about `maxBytes` (and a bounded
   * number of keys looked at). The entry is changed in place: its
   * bytes are the same, and whoever holds it (a kept listing, an open snapshot's pre-image) lets go of
   * the arena too. True while more is due.
   */
  evacuate(maxBytes: number, entryOf: (key: string) => KvEntry | undefined): boolean {
    let copied = 0;
    for (let looked = 0; this.due.length > 0 && copied < maxBytes && looked < MAX_KEYS_PER_EVACUATE; looked++) {
      const buffer = this.due[0];
      const arena = this.byBuffer.get(buffer)!;
      if (arena.cursor === arena.keys.length) {
        this.byBuffer.delete(buffer);
        this.due.shift();
        continue;
      }
      const entry = entryOf(arena.keys[arena.cursor++]);
      const v = entry?.Value;
      if (v && v.buffer === buffer) {
        entry.Value = this.store(entry.Key, v);
        copied += v.byteLength;
      }
    }
    return this.due.length > 0;
  }

  /** A new write arena with room for `n` bytes at least; the one it replaces is checked like any other from now on. */
  private openWriteArena(n: number): Writing {
    const previous = this.writing;
    const size = Math.min(WRITE_ARENA_BYTES, Math.max(FIRST_WRITE_ARENA_BYTES, 2 * (previous?.into.byteLength ?? 0), n));
    const into = new Uint8Array(size);
    const arena: Arena = { bytes: 0, live: 0, keys: [], cursor: 0, due: false, kind: 'written', from: 0, to: 0 };
    this.byBuffer.set(into.buffer, arena);
    this.writing = { into, arena };
    if (previous) this.check(previous.into.buffer, previous.arena);
    return this.writing;
  }

  private check(buffer: ArrayBufferLike, arena: Arena): void {
    if (arena.due || arena.live >= arena.bytes * KEEP) return;
    if (this.writing?.arena === arena) return; // still being filled
    arena.due = true;
    this.due.push(buffer);
    if (this.due.length === 1) this.onDue?.();
  }
}
