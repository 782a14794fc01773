// Decoding a state snapshot a step at a time, so that a restore can rebuild a large state between
// other work instead of in one ~1 s stall (100,000 nodes). msgpackr decodes every value; this file
// only walks the few outer containers itself — the snapshot's top map, its `state` map and each
// table's map — reading their headers, and decodes each array found there a batch of items per step
// (msgpackr's unpackMultiple, stopped after the batch). The result is the value packr.unpack() gives
// for the same bytes (a walked map whose keys are not plain strings is refused: a snapshot has none).
// The bytes may come in pieces (decodePieceSteps): an item cut by a piece's end is decoded once
// the next piece is there, and a piece is let go once decoded past.
import { Packr } from 'msgpackr';

/**
 * The same options as the snapshot's encoder and decoder (snapshot.ts), except that binary values
 * (KV values) are copied out of the bytes being decoded: a restore then keeps no piece of the
 * snapshot alive through a view into it, and the tables own their values (kv-table.ts adopts them).
 */
const packr = new Packr({ useRecords: false, copyBuffers: true });
/**
 * The same, leaving binary values as views into the bytes decoded: used only where the caller keeps
 * those bytes for the values (a restore's arenas: kv/value-arenas.ts) and only on a piece itself,
 * never on the window below, which is reused.
 */
const viewPackr = new Packr({ useRecords: false, copyBuffers: false });

/** Options of decodePieceSteps(). */
export interface PieceDecodeOptions {
  /**
   * The dotted path of one walked array (`state.kv.entries`) whose items' binary values may be views
   * into the pieces: the caller promises never to change or reuse a piece handed in. An item cut by
   * a piece's end is still decoded from a copy (its values own their bytes).
   */
  viewsAt?: string;
}

/** Bytes of the next piece first joined to an item cut by a piece's end; doubled while the item is longer. */
const SEAM_START_BYTES = 16 * 1024;
/**
 * What one() first gives msgpackr of a large piece (doubled while the value is longer): its string
 * extraction scans ahead to the end of the bytes it is given, so a map key read alone at the start
 * of a 32 MiB restore arena (snapshot-arenas.ts) extracted every string after it, 25-45 ms, to use one.
 */
const ONE_WINDOW_BYTES = 64 * 1024;

/** Outer map levels walked here: the snapshot, its state, a table. Deeper values are decoded whole. */
const WALKED_DEPTH = 3;

/** What a piece-fed decoder yields when it needs the next piece (the driver answers next(piece), or next(undefined) at the end). */
export const MORE = Symbol('more snapshot bytes');
/** A step of a piece-fed decoder: `MORE` asks for the next piece; undefined only marks a step done. */
export type PieceRequest = typeof MORE | undefined;

/**
 * Steps decoding `bytes` (one msgpack value): each decodes about `step` array items at most, and the
 * generator returns the value. Throws, as packr.unpack() would, on bytes that are not one value.
 */
export function* decodeSteps(bytes: Uint8Array, step = 512): Generator<void, unknown, void> {
  return yield* feedPieces(decodePieceSteps(step), [bytes]);
}

/**
 * Runs a piece-fed decoder (`steps`) over pieces already in memory, a step at a time. Each piece is
 * let go (its slot in `pieces` cleared) once handed over, so a caller that passes the only array of
 * them holds no piece the decoder is done with.
 */
export function* feedPieces<T>(steps: Generator<PieceRequest, T, Uint8Array | undefined>, pieces: (Uint8Array | undefined)[]): Generator<void, T, void> {
  let next = 0;
  let r = steps.next();
  while (!r.done) {
    if (r.value === MORE) {
      const piece = next < pieces.length ? pieces[next] : undefined;
      if (next < pieces.length) pieces[next++] = undefined;
      r = steps.next(piece);
    } else {
      yield;
      r = steps.next();
    }
  }
  return r.value;
}

/**
 * decodeSteps() over bytes that arrive in pieces (a stored snapshot read a piece at a time, a
 * transfer's pieces): the generator yields MORE when it needs the next piece and is given it by
 * next(piece) — next(undefined) when there is none —, and yields undefined after each step of about
 * `step` items. It holds only the piece it is decoding (plus the bytes of an item that straddles two
 * pieces), never the whole: a restore from it needs no second copy of the state's bytes.
 */
export function* decodePieceSteps(step = 512, opts: PieceDecodeOptions = {}): Generator<PieceRequest, unknown, Uint8Array | undefined> {
  let buf: Buffer = Buffer.alloc(0);
  let pos = 0;
  let ended = false;
  /** Whether `buf` is a piece as handed in (not the window): only then may values be views into it. */
  let bufIsPiece = false;
  /**
   * With views (opts.viewsAt), an item cut by a piece's end is joined in the window with only the
   * start of the next piece (`taken` bytes of it, after `left` bytes of the one before), not the whole
   * piece: once decoding has passed the seam it goes on in the piece itself, so the piece's values
   * can still be views into it.
   */
  let seam: { piece: Buffer; left: number; taken: number } | null = null;
  /**
   * Where an item cut by a piece's end is put back together: the rest of the piece, then the next
   * piece, in one buffer reused (grown when needed) rather than a new one per piece — nothing decoded
   * is a view into it (copyBuffers), and a new buffer per piece was garbage piling up faster than
   * the GC took it.
   */
  let window: Buffer = Buffer.alloc(0);

  /** `bytes` (the rest of `buf` from `pos`, then `more`) as the window's contents, and the window as `buf`. */
  function intoWindow(more: Buffer): void {
    const left = buf.length - pos;
    const need = left + more.length;
    if (window.length < need) {
      const bigger = Buffer.allocUnsafe(Math.max(need, 2 * window.length));
      buf.copy(bigger, 0, pos);
      window = bigger;
    } else {
      // May overlap (the rest is in the window already): copy() moves it as memmove does.
      buf.copy(window, 0, pos);
    }
    more.copy(window, left);
    buf = window.subarray(0, need);
    bufIsPiece = false;
    pos = 0;
  }

  /** Once decoding has passed a seam, it goes on in the piece itself. */
  function leaveSeam(): void {
    if (!seam || pos < seam.left) return;
    pos -= seam.left;
    buf = seam.piece;
    bufIsPiece = true;
    seam = null;
  }

  /** Appends the next piece (or, at a seam, more of it) to what is left of the current one; false at the end of the input. */
  function* fill(): Generator<PieceRequest, boolean, Uint8Array | undefined> {
    if (seam) {
      if (seam.taken < seam.piece.length) {
        // The cut item is longer than the piece's start joined so far: join more of it.
        const taken = Math.min(seam.piece.length, 2 * seam.taken);
        const left = seam.left - pos;
        buf = buf.subarray(0, seam.left);
        intoWindow(seam.piece.subarray(0, taken));
        seam.left = left;
        seam.taken = taken;
        return true;
      }
      // The whole piece is in the window: it is plain bytes now, joined to the next as below.
      seam = null;
    }
    if (ended) return false;
    const piece = yield MORE;
    if (piece === undefined) {
      ended = true;
      return false;
    }
    const next = Buffer.from(piece.buffer, piece.byteOffset, piece.length);
    if (pos >= buf.length) {
      buf = next;
      bufIsPiece = true;
      pos = 0;
    } else if (opts.viewsAt !== undefined && next.length > SEAM_START_BYTES) {
      const left = buf.length - pos;
      const taken = SEAM_START_BYTES;
      intoWindow(next.subarray(0, taken));
      seam = { piece: next, left, taken };
    } else {
      intoWindow(next);
    }
    return true;
  }
  /** At least `n` bytes from `pos` (fewer only at the end of the input). */
  function* ensure(n: number): Generator<PieceRequest, void, Uint8Array | undefined> {
    while (buf.length - pos < n) {
      if (!(yield* fill())) throw new Error('unexpected end of snapshot data');
    }
  }

  /**
   * Decodes `max` values from `pos`, handing each to `take`, reading more pieces as they straddle
   * them; with `views`, binary values decoded from a piece itself are views into it.
   */
  function* decodeRun(max: number, take: (v: unknown) => void, views = false): Generator<PieceRequest, void, Uint8Array | undefined> {
    let got = 0;
    let oneWindow = ONE_WINDOW_BYTES;
    while (got < max) {
      leaveSeam();
      if (pos >= buf.length) yield* ensure(1);
      let end = 0;
      let incomplete = false;
      const until = max === 1 ? Math.min(buf.length, pos + oneWindow) : buf.length;
      try {
        (views && bufIsPiece ? viewPackr : packr).unpackMultiple(buf.subarray(pos, until), (v: unknown, _start?: number, stop?: number) => {
          take(v);
          end = stop ?? end;
          return ++got < max ? undefined : false;
        });
      } catch (err) {
        if (!(err as { incomplete?: boolean }).incomplete) throw err;
        incomplete = true;
      }
      pos += end;
      if (got >= max) break;
      // Past a seam: the rest is decoded in the piece itself (what stopped the window was its end).
      if (seam && pos >= seam.left) continue;
      if (incomplete && until < buf.length) {
        // Cut by one()'s window, not by the piece: a wider one.
        oneWindow *= 2;
        continue;
      }
      // An item cut by the piece's end, or the piece used up before `max`: the next piece continues it.
      if (incomplete || pos >= buf.length) {
        if (!(yield* fill())) throw new Error('unexpected end of snapshot data');
      }
    }
  }
  function* one(): Generator<PieceRequest, unknown, Uint8Array | undefined> {
    let value: unknown;
    yield* decodeRun(1, (v) => (value = v));
    return value;
  }

  /** A map or array header at `pos` (consumed, `bytes` long), or null (nothing consumed). */
  function* header(): Generator<PieceRequest, { map: boolean; n: number; bytes: number } | null, Uint8Array | undefined> {
    // Not after it: value() may step back over the header just read, which must still be in `buf`.
    leaveSeam();
    yield* ensure(1);
    const b = buf[pos];
    if (b >= 0x80 && b <= 0x8f) return (pos += 1), { map: true, n: b & 0x0f, bytes: 1 };
    if (b >= 0x90 && b <= 0x9f) return (pos += 1), { map: false, n: b & 0x0f, bytes: 1 };
    if (b === 0xde || b === 0xdc) {
      yield* ensure(3);
      const n = buf.readUInt16BE(pos + 1);
      return (pos += 3), { map: b === 0xde, n, bytes: 3 };
    }
    if (b === 0xdf || b === 0xdd) {
      yield* ensure(5);
      const n = buf.readUInt32BE(pos + 1);
      return (pos += 5), { map: b === 0xdf, n, bytes: 5 };
    }
    return null;
  }

  function* value(depth: number, path: string): Generator<PieceRequest, unknown, Uint8Array | undefined> {
    const h = yield* header();
    if (!h) return yield* one();
    if (!h.map) {
      const items: unknown[] = [];
      const push = (v: unknown) => void items.push(v);
      const views = path === opts.viewsAt;
      while (items.length < h.n) {
        yield* decodeRun(Math.min(step, h.n - items.length), push, views);
        yield;
      }
      return items;
    }
    if (depth >= WALKED_DEPTH) {
      // Decoded whole by msgpackr. The header's bytes are still just before `pos` (a piece read
      // while reading the header keeps every byte from the header's start).
      pos -= h.bytes;
      return yield* one();
    }
    const out: Record<string, unknown> = {};
    for (let i = 0; i < h.n; i++) {
      const key = yield* one();
      // The walked levels (the snapshot, its state, each table) have plain string keys only; what
      // is read of them may already be let go, so a map that has another key cannot be handed to
      // msgpackr whole here: it is refused.
      if (typeof key !== 'string' || key === '__proto__') throw new Error('snapshot map key is not a plain string');
      out[key] = yield* value(depth + 1, path === '' ? key : `${path}.${key}`);
    }
    return out;
  }

  const result = yield* value(0, '');
  // Nothing may follow the value, in this piece or any later one.
  leaveSeam();
  while (pos >= buf.length && (yield* fill()));
  if (pos !== buf.length) throw new Error(`${buf.length - pos} bytes after the snapshot value`);
  return result;
}
