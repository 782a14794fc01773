// KV values that a restore left in the memory it read the snapshot into (issue #34).
//
// A restore used to copy every value out of the snapshot's bytes into a buffer of its own. V8 starts
// a mark-compact of the whole heap for about every 64 MiB of new ArrayBuffer memory, so a restore of
// 1 GiB of 4 KiB values ran sixteen of them over a heap that grew to the whole state: half of a
// 4.7 s restart. Now a restore reads the stored snapshot into a few large buffers (arenas), each
// allocated as its read starts, and the table keeps its values as views into them. The arenas are
// SharedArrayBuffers, which V8 leaves out of that count altogether (snapshot-arenas.ts).
//
// The price: an arena is freed only when no value points into it. So the table counts, per arena,
// the bytes of the values it still stores there. Once they fall below KEEP of the arena (values
// overwritten or deleted, or an arena that held mostly other tables' bytes), the values left are
// copied out a few MiB at a time (evacuate()) and the arena goes: memory held for bytes no longer
// stored stays under half of what the arena still stores.
import type { KvEntry } from './kv-records';

/** An arena is emptied once the values stored in it are fewer bytes than this share of it. */
const KEEP = 2 / 3;
/** Keys evacuate() looks at per call at most, whatever they hold (most may have been overwritten already). */
const MAX_KEYS_PER_EVACUATE = 16_384;

interface Arena {
  readonly bytes: number;
  /** Bytes of the values stored in it now. */
  live: number;
  /** The keys whose values were adopted into it, in load order; evacuate() walks them. */
  readonly keys: string[];
  /** How far evacuate() has walked `keys`. */
  cursor: number;
  due: boolean;
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
  /** Called when an arena becomes due for evacuation (the store schedules evacuate()). */
  onDue: (() => void) | undefined;

  /** `buffer` is one of the restore's arenas. */
  add(buffer: Uint8Array): void {
    this.candidates.add(buffer.buffer);
  }

  /** `v` as the table keeps it when it is a view into an arena (its bytes counted under `key`), or undefined. */
  adopt(key: string, v: Uint8Array): Uint8Array | undefined {
    let arena = this.byBuffer.get(v.buffer);
    if (!arena) {
      if (!this.candidates.has(v.buffer)) return undefined;
      arena = { bytes: v.buffer.byteLength, live: 0, keys: [], cursor: 0, due: false };
      this.byBuffer.set(v.buffer, arena);
    }
    arena.live += v.byteLength;
    arena.keys.push(key);
    // A plain Uint8Array, as a copied value is (the decoder's views are Buffers).
    return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
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

  /** Arenas still held, and their bytes (tests, the restore's log line). */
  held(): { arenas: number; bytes: number; liveBytes: number } {
    let bytes = 0;
    let liveBytes = 0;
    for (const a of this.byBuffer.values()) {
      bytes += a.bytes;
      liveBytes += a.live;
    }
    return { arenas: this.byBuffer.size, bytes, liveBytes };
  }

  /**
   * Copies values out of due arenas, up to about `maxBytes` (and a bounded number of keys looked at),
   * giving each entry still pointing into one a value of its own. The entry is changed in place: its
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
        entry.Value = new Uint8Array(v);
        copied += v.byteLength;
      }
    }
    return this.due.length > 0;
  }

  private check(buffer: ArrayBufferLike, arena: Arena): void {
    if (arena.due || arena.live >= arena.bytes * KEEP) return;
    arena.due = true;
    this.due.push(buffer);
    if (this.due.length === 1) this.onDue?.();
  }
}
