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

/** The defaults above, for a restore that wants others (tests cut a small state into many arenas). */
export interface ArenaOptions {
  arenaBytes?: number;
  arenaMinSnapshotBytes?: number;
}

/** The source's bytes as arenas, one per piece given out by next(); undefined when the source cannot read into them. */
export function readIntoArenas(source: RestoreSource, opts: ArenaOptions = {}): { arenas: ValueArenas; next(): Promise<Uint8Array | undefined> } | undefined {
  const { size, readRange } = source;
  const arenaBytes = opts.arenaBytes ?? ARENA_BYTES;
  if (size === undefined || !readRange || size < (opts.arenaMinSnapshotBytes ?? ARENA_MIN_SNAPSHOT_BYTES)) return undefined;
  // Allocated together: V8 counts them as one step of external memory (one collection, over an
  // almost empty heap at a restart), not one step per arena.
  const buffers: (Buffer | undefined)[] = [];
  for (let at = 0; at < size; at += arenaBytes) buffers.push(Buffer.allocUnsafeSlow(Math.min(arenaBytes, size - at)));
  const arenas = new ValueArenas(buffers as Buffer[]);
  const read = (k: number) => readRange.call(source, k * arenaBytes, buffers[k]!);
  let k = 0;
  let ahead: Promise<void> | undefined = buffers.length > 0 ? read(0) : undefined;
  return {
    arenas,
    async next() {
      if (k >= buffers.length || !ahead) return undefined;
      await ahead;
      const piece = buffers[k]!;
      // Held from here on only by the decoder and by the values adopted into it.
      buffers[k++] = undefined;
      ahead = k < buffers.length ? read(k) : undefined;
      // A read ahead that nobody takes (the restore failed) fails silently.
      ahead?.catch(() => undefined);
      return piece;
    },
  };
}
