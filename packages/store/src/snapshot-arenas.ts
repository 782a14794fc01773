// A stored snapshot read into restore arenas (kv/value-arenas.ts): a few large buffers allocated all
// at once before anything is decoded, each filled by one read and handed to the decoder as a piece,
// the next read under way while the decoder works on the one before. Only for a source that can read
// into memory it is given (Raft's stored snapshot) and a state large enough for it to matter.
import { ValueArenas } from './kv/value-arenas';

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
/** Up to this much heap in use, the arenas are allocated all at once (below). */
const UP_FRONT_HEAP_BYTES = 128 << 20;

/** The defaults above, for a restore that wants others (tests cut a small state into many arenas). */
export interface ArenaOptions {
  arenaBytes?: number;
  arenaMinSnapshotBytes?: number;
  upFrontHeapBytes?: number;
}

/** The source's bytes as arenas, one per piece given out by next(); undefined when the source cannot read into them. */
export function readIntoArenas(source: RestoreSource, opts: ArenaOptions = {}): { arenas: ValueArenas; next(): Promise<Uint8Array | undefined> } | undefined {
  const { size, readRange } = source;
  const arenaBytes = opts.arenaBytes ?? ARENA_BYTES;
  if (size === undefined || !readRange || size < (opts.arenaMinSnapshotBytes ?? ARENA_MIN_SNAPSHOT_BYTES)) return undefined;
  const count = Math.ceil(size / arenaBytes);
  const allocate = (k: number) => Buffer.allocUnsafeSlow(Math.min(arenaBytes, size - k * arenaBytes));
  // Allocated together, V8 counts them as one step of external memory: one collection, over the
  // almost empty heap of a restart or a wiped follower, instead of one per 64 MiB. But that collection
  // is a full one, all at once: over a heap that already holds a large state (a follower installing a
  // newer snapshot over its own) it stalled the loop for a second at 1 GiB. There each arena is
  // allocated when its read starts, and V8 marks incrementally as they come (as it did per value).
  const upFront = process.memoryUsage().heapUsed <= (opts.upFrontHeapBytes ?? UP_FRONT_HEAP_BYTES);
  const buffers: (Buffer | undefined)[] = Array.from({ length: count }, (_, k) => (upFront ? allocate(k) : undefined));
  const arenas = new ValueArenas();
  // Reads run ahead of the decoder, one after another (readRange is in order), as far as memory
  // already allocated allows, or two arenas when each is allocated as it is read: a read of a few
  // MiB at a time, each needing the loop for its callback and CRC, only one arena ahead left the
  // decoder waiting (2.4 s against 2.1 s for a restore at 1 GiB).
  const lookahead = upFront ? count : 2;
  const reads: Promise<void>[] = [];
  let chain: Promise<void> = Promise.resolve();
  const readUpTo = (last: number) => {
    for (let j = reads.length; j <= Math.min(last, count - 1); j++) {
      chain = chain.then(() => {
        const into = (buffers[j] ??= allocate(j));
        arenas.add(into);
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
