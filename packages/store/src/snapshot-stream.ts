// Snapshot capture and encoding without stalling the event loop: Store.openSnapshot() captures the
// state as a tree of Fields (an object's fields, in order) and Streams (arrays whose items are
// produced a step at a time from references taken at the snapshot's index; see snapshot-handle.ts).
// encodeSteps() turns that tree into bytes a few hundred items per step, so the work can run in
// slices between applies. The bytes are exactly what packr.pack() of the whole dump gives
// (msgpack-writer.ts writes what msgpackr writes). Tables import this file, not snapshot.ts (the
// format, which names the whole state), so no table depends on the state that holds it.
import { performance } from 'node:perf_hooks';
import { MsgpackWriter } from './msgpack-writer';

// ---- captured values ----

/** An object whose field values may be Streams or Fields; encoded as msgpackr encodes a plain object. */
export class Fields {
  constructor(readonly fields: readonly (readonly [string, unknown])[]) {}
}

/**
 * One value made when its turn comes in the encoding (a step of its own): for a column that is
 * cheap to copy when captured but costs a pass to turn into its encoded form (a join, a buffer).
 */
export class Lazy {
  constructor(readonly make: () => unknown) {}
}

/**
 * One value made over several steps when its turn comes: for a column whose encoded form takes a
 * pass too long for one step (the request window's 100,000 ids joined: tens of ms under load).
 */
export class SteppedLazy {
  constructor(readonly make: () => Generator<void, unknown, void>) {}
}

/**
 * Where a Stream writes its items: `item(v)` one value; `pair`/`quad` an array of 2 or 4 values,
 * written without making the array (a snapshot writes hundreds of thousands of them).
 */
export interface StreamOut {
  item(v: unknown): void;
  pair(a: unknown, b: unknown): void;
  quad(a: unknown, b: unknown, c: unknown, d: unknown): void;
}

/**
 * An array of `count` items encoded a step at a time: `items(out, step)` writes each item to `out`
 * and yields after about `step` of them (a step). The count comes first (it is the array's header);
 * a function is called when the stream's turn comes. A Stream reads only what was captured when it
 * was made, so it may run while the store moves on.
 */
export class Stream {
  constructor(
    readonly count: number | (() => number),
    readonly items: (out: StreamOut, step: number) => Iterator<void>,
  ) {}
}

/** `items[0..)`. */
export function listStream(items: readonly unknown[]): Stream {
  return new Stream(items.length, function* (out, step) {
    for (let i = 0; i < items.length; i++) {
      out.item(items[i]);
      if ((i + 1) % step === 0) yield;
    }
  });
}

/**
 * For each of `keys[0..)`, `write(out, key)` writes at most one item (it says whether it did; `count`
 * of them do). A step ends after `step` items, or after 4 × `step` keys when most write nothing.
 */
export function keyedStream<K>(count: number, keys: readonly K[], write: (out: StreamOut, key: K) => boolean): Stream {
  return new Stream(count, function* (out, step) {
    let written = 0;
    let looked = 0;
    for (let i = 0; i < keys.length; i++) {
      if (write(out, keys[i])) written++;
      if (written >= step || ++looked >= 4 * step) {
        written = looked = 0;
        yield;
      }
    }
  });
}

/** [keys[i], values[i]] for each i, as msgpack arrays of two. */
export function pairStream(keys: readonly unknown[], values: readonly unknown[]): Stream {
  return new Stream(keys.length, function* (out, step) {
    for (let i = 0; i < keys.length; i++) {
      out.pair(keys[i], values[i]);
      if ((i + 1) % step === 0) yield;
    }
  });
}

/** The values of each group in turn (groups are maps no one writes to any more: see CatalogTable). */
export function flatStream(groups: readonly ReadonlyMap<string, unknown>[]): Stream {
  const count = () => {
    let n = 0;
    for (let i = 0; i < groups.length; i++) n += groups[i].size;
    return n;
  };
  return new Stream(count, function* (out, step) {
    // forEach rather than an iterator: no object made per group.
    const item = (v: unknown) => out.item(v);
    let written = 0;
    for (let i = 0; i < groups.length; i++) {
      const group = groups[i];
      group.forEach(item);
      written += group.size;
      if (written >= step) {
        written = 0;
        yield;
      }
    }
  });
}

/** Item moves per step of a merge sort (in units of `step`). */
const SORT_STEPS = 64;

/**
 * `items` (which the stream takes over) in `compare` order, sorted in steps: a bottom-up merge sort,
 * stable like Array.prototype.sort, so the order is the one a sort() of the same array gives.
 */
export function sortedStream<T>(items: T[], compare: (a: T, b: T) => number): Stream {
  return new Stream(items.length, function* (out, step) {
    let src = items;
    if (src.length <= SORT_STEPS * step) {
      src.sort(compare);
    } else {
      let dst = new Array<T>(src.length);
      let work = 0;
      for (let width = 1; width < src.length; width *= 2) {
        for (let lo = 0; lo < src.length; lo += 2 * width) {
          const mid = Math.min(lo + width, src.length);
          const hi = Math.min(lo + 2 * width, src.length);
          let i = lo;
          let j = mid;
          let k = lo;
          while (k < hi) {
            // Taking the left item unless the right one is strictly smaller keeps the sort stable.
            dst[k++] = i < mid && (j >= hi || compare(src[j], src[i]) >= 0) ? src[i++] : src[j++];
            if (++work >= SORT_STEPS * step) {
              work = 0;
              yield;
            }
          }
        }
        [src, dst] = [dst, src];
      }
    }
    for (let i = 0; i < src.length; i++) {
      out.item(src[i]);
      if ((i + 1) % step === 0) yield;
    }
  });
}

// ---- the encoder ----

/** Bytes copied into the result per step of the final assembly. */
const COPY_STEP = 1 << 20;

/** The steps of writing `value` into `w` (see encodeSteps). */
function* walk(w: MsgpackWriter, value: unknown, step: number): Generator<void, void, void> {
  function* encode(v: unknown): Generator<void, void, void> {
    if (v instanceof Fields) {
      w.mapHeader(v.fields.length);
      for (const [key, field] of v.fields) {
        w.value(key);
        yield* encode(field);
      }
      return;
    }
    if (v instanceof Lazy) {
      yield;
      w.value(v.make());
      return;
    }
    if (v instanceof SteppedLazy) {
      yield;
      w.value(yield* v.make());
      return;
    }
    if (v instanceof Stream) {
      const expected = typeof v.count === 'number' ? v.count : v.count();
      w.arrayHeader(expected);
      let count = 0;
      const out: StreamOut = {
        item(x) {
          w.value(x);
          count++;
        },
        pair(a, b) {
          w.arrayHeader(2);
          w.value(a);
          w.value(b);
          count++;
        },
        quad(a, b, c, d) {
          w.arrayHeader(4);
          w.value(a);
          w.value(b);
          w.value(c);
          w.value(d);
          count++;
        },
      };
      const steps = v.items(out, step);
      while (!steps.next().done) yield;
      if (count !== expected) throw new Error(`snapshot stream wrote ${count} items, its header says ${expected}`);
      return;
    }
    w.value(v);
  }

  yield* encode(value);
}

/**
 * The encoding of `value` (plain data, Fields and Streams) as steps: each does a bounded piece of
 * work (`step` items written — 256 by default —, a slice of a sort, a megabyte copied) and the
 * generator returns the bytes. Run it with runSync() or runSliced(). `expectedSize` (the previous
 * snapshot's size) lets the bytes be written into a single buffer (see msgpack-writer.ts).
 */
export function* encodeSteps(value: unknown, step = 256, expectedSize = 0): Generator<void, Uint8Array, void> {
  const w = new MsgpackWriter(expectedSize);
  yield* walk(w, value, step);
  const size = w.size;
  const chunks = w.finish();
  // All in the one buffer sized from the last snapshot: the result is a view of it. Unless the state
  // shrank so much that most of that buffer would be kept alive for nothing: then copy what is used.
  if (chunks.length === 1 && (chunks[0].buffer.byteLength <= 2 * size || chunks[0].buffer.byteLength < 1 << 20)) return chunks[0];
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  let sinceStep = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
    sinceStep += chunk.length;
    if (sinceStep >= COPY_STEP) {
      sinceStep = 0;
      yield;
    }
  }
  return out;
}

/**
 * The same encoding as steps that hand it out in pieces of about `pieceBytes` (a bit more: a piece
 * ends at a step's end) instead of returning it: a step yields the pieces to write out (views of
 * the writer's buffer, which the next step overwrites) or nothing. Memory: one buffer of about
 * `pieceBytes` for the whole encoding, however large the state.
 */
export function* encodePieceSteps(value: unknown, step = 256, pieceBytes = 1 << 20): Generator<Uint8Array[] | undefined, void, void> {
  const w = new MsgpackWriter(pieceBytes);
  const steps = walk(w, value, step);
  while (!steps.next().done) yield w.size >= pieceBytes ? w.drain() : undefined;
  if (w.size > 0) yield w.drain();
}

/**
 * Runs piece steps (encodePieceSteps) in slices like runSliced, handing each piece to `write` and
 * waiting for it before the next step (which reuses the piece's memory). The time spent waiting
 * for `write` is not counted as the steps' busy time.
 */
export async function runSlicedPieces(
  steps: Iterator<Uint8Array[] | undefined, void>,
  write: (piece: Uint8Array) => Promise<void>,
  opts: SliceOptions = {},
): Promise<{ busyMs: number; bytes: number }> {
  const sliceMs = opts.sliceMs ?? 4;
  const pause = opts.pause ?? nextTurn;
  let busyMs = 0;
  let bytes = 0;
  for (;;) {
    await pause();
    let err = opts.stop?.();
    if (err) throw err;
    const start = performance.now();
    let r: IteratorResult<Uint8Array[] | undefined, void>;
    do r = steps.next();
    while (!r.done && !r.value && performance.now() - start < sliceMs);
    busyMs += performance.now() - start;
    if (r.done) return { busyMs, bytes };
    if (r.value) {
      for (const piece of r.value) {
        await write(piece);
        bytes += piece.length;
      }
      err = opts.stop?.();
      if (err) throw err;
    }
  }
}

/** Runs steps to the end at once. */
export function runSync<T>(steps: Iterator<void, T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

export interface SliceOptions {
  /** Event-loop time per slice, in ms, before yielding (default 4). */
  sliceMs?: number;
  /** How to yield between slices (default: until the next event-loop turn, via setImmediate). */
  pause?: () => Promise<void>;
  /** Checked after every pause: a non-null error ends the run with it. */
  stop?: () => Error | null;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs steps in slices of about `sliceMs`, yielding to the event loop before each (so the caller
 * returns at once); resolves with the result and the event-loop time the steps took.
 */
export async function runSliced<T>(steps: Iterator<void, T>, opts: SliceOptions = {}): Promise<{ value: T; busyMs: number }> {
  const sliceMs = opts.sliceMs ?? 4;
  const pause = opts.pause ?? nextTurn;
  let busyMs = 0;
  for (;;) {
    await pause();
    const err = opts.stop?.();
    if (err) throw err;
    const start = performance.now();
    let r: IteratorResult<void, T>;
    do r = steps.next();
    while (!r.done && performance.now() - start < sliceMs);
    busyMs += performance.now() - start;
    if (r.done) return { value: r.value, busyMs };
  }
}
