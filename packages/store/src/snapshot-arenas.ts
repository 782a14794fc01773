// A stored snapshot read into restore arenas (kv/value-arenas.ts): a few large buffers, each allocated
// when its read starts, filled by that one read and handed to the decoder as a piece, the reads
// running ahead while the decoder works on the ones before. Only for a source that can read
// into memory it is given (Raft's stored snapshot) and a state large enough for it to matter.
import { ValueArenas } from './kv/value-arenas';
import { mapPages } from './page-mapper';

/** A snapshot's bytes a piece at a time (Raft's SnapshotSource); a stored one can also read into memory it is given. */
export interface RestoreSource {
  readonly chunks: number;
  read(i: number): Promise<Uint8Array>;
  /** Total bytes, with readRange. */
  readonly size?: number;
  /** Bytes from `offset` into all of `into`; called in order, each byte once. */
  readRange?(offset: number, into: Uint8Array): Promise<void>;
}

/** Each arena's size; the last is what is left. Smaller arenas are freed sooner once their values are overwritten. */
export const ARENA_BYTES = 32 << 20;
/** Below this a snapshot is restored the copying way: a few collections at most. */
export const ARENA_MIN_SNAPSHOT_BYTES = 8 << 20;
/** Up to this much heap in use, the reads run ahead to the end (below). */
const READ_TO_END_HEAP_BYTES = 128 << 20;

/** The defaults above, for a restore that wants others (tests cut a small state into many arenas). */
export interface ArenaOptions {
  arenaBytes?: number;
  arenaMinSnapshotBytes?: number;
  readToEndHeapBytes?: number;
}

/** The source's bytes as arenas, one per piece given out by next(); undefined when the source cannot read into them. */
export function readIntoArenas(source: RestoreSource, opts: ArenaOptions = {}): { arenas: ValueArenas; next(): Promise<Uint8Array | undefined> } | undefined {
  const { size, readRange } = source;
  const arenaBytes = opts.arenaBytes ?? ARENA_BYTES;
  if (size === undefined || !readRange || size < (opts.arenaMinSnapshotBytes ?? ARENA_MIN_SNAPSHOT_BYTES)) return undefined;
  const count = Math.ceil(size / arenaBytes);
  // SharedArrayBuffer memory, which V8 leaves out of its external memory count: an ArrayBuffer's
  // counts, and V8 starts marking the whole heap each time that count passes 64 MiB over what the
  // last mark-compact left, so a restore of 1 GiB marked its growing heap 12-13 times, all of it
  // live. The arenas' lifetimes are the table's to manage (ValueArenas), not the collector's.
  const allocate = (k: number) => Buffer.from(new SharedArrayBuffer(Math.min(arenaBytes, size - k * arenaBytes)));
  // Each arena is allocated when its read starts, one per turn of the event loop. As ArrayBuffers
  // allocated all at once before the first read, they held the loop 50-80 ms at the start of every
  // restore at 1 GiB: once 32 MiB of new ArrayBuffers' memory is young, V8 scavenges before every
  // further one, 32 scavenges in one turn. (SharedArrayBuffers count there no more than above.)
  const buffers: (Buffer | undefined)[] = new Array<Buffer | undefined>(count).fill(undefined);
  // Over a small heap (a restart, a wiped follower) the reads run to the end as fast as the disk
  // goes. Over a heap that already holds a large state (a follower installing a newer snapshot over
  // its own), arenas that were ArrayBuffers, external memory growing by a gigabyte, brought a full
  // collection, all at once, that stalled the loop for a second at 1 GiB: there the reads stay two
  // arenas ahead of the decoder, which also bounds what a restore holds beside the state it replaces.
  const readToEnd = process.memoryUsage().heapUsed <= (opts.readToEndHeapBytes ?? READ_TO_END_HEAP_BYTES);
  const arenas = new ValueArenas();
  // Reads run ahead of the decoder, one after another (readRange is in order): to the end, or two
  // arenas ahead. Only one arena ahead, a read of a few MiB at a time, each needing the loop for its
  // callback and CRC, left the decoder waiting (2.4 s against 2.1 s for a restore at 1 GiB).
  const lookahead = readToEnd ? count : 2;
  const reads: Promise<void>[] = [];
  let chain: Promise<void> = Promise.resolve();
  const readUpTo = (last: number) => {
    for (let j = reads.length; j <= Math.min(last, count - 1); j++) {
      chain = chain.then(async () => {
        const into = (buffers[j] ??= allocate(j));
        arenas.add(into);
        // Mapped off the event loop first, so the read below takes no page faults (page-mapper.ts).
        await mapPages(into.buffer as SharedArrayBuffer);
        return readRange.call(source, j * arenaBytes, into);
      });
      reads.push(chain);
      // A read ahead that nobody takes (the restore failed) fails silently.
      chain.catch(() => undefined);
    }
  };
  let k = 0;
  return {
    arenas,
    async next() {
      if (k >= count) return undefined;
      readUpTo(k + lookahead - 1);
      await reads[k];
      const piece = buffers[k]!;
      // Held from here on only by the decoder and by the values adopted into it.
      buffers[k++] = undefined;
      readUpTo(k + lookahead - 1);
      return piece;
    },
  };
}

