// A msgpack writer for plain data (objects, arrays, strings, numbers, booleans, null, undefined),
// byte for byte what msgpackr's Packr({ useRecords: false }) writes, used to serialise snapshots.
//
// Why not msgpackr itself: it reads `value.constructor` and `value.hasOwnProperty` on every object.
// The store's records were then made by object spread (`{ ...data, CreateIndex, ModifyIndex }`), and
// V8 gave each a map of its own whose prototype-validity cell is invalid, so each of those
// prototype-chain loads allocated a fresh inline-cache handler in old space (~64 B per record). Over
// a 100,000-node snapshot that was ~50–90 MB of old-space garbage, enough to start a major GC whose
// incremental marking steps stalled the event loop for 30–60 ms. This writer never loads a property
// through the prototype chain (Object.getPrototypeOf, Object.hasOwn, Array.isArray). Anything not
// plain (a Uint8Array, a Date, a Map) is handed to msgpackr, so its encoding is msgpackr's by
// construction. (Records now share maps, indexed-record.ts; a snapshot may still hold decoded
// objects of any shape, and the writer stays off the prototype chain for them.)
//
// Memory: new ArrayBuffer memory counts towards V8's old-generation limit, so every megabyte a
// snapshot allocates brings the next major GC nearer — and a major GC of a large store's heap is what
// stalls the event loop now. The writer therefore writes into one buffer of the size it is told to
// expect (the previous snapshot's, plus an eighth) and hands that buffer out as the result: one
// allocation of about the snapshot's size. Only when that is too small (the first snapshot, a state
// that grew) does it go on in further blocks, which finish() returns for the caller to join.
import { Packr } from 'msgpackr';

const packr = new Packr({ useRecords: false });

/**
 * A value already encoded (by packPlain()), written as its bytes: something kept for a long time
 * in encoded form — a buffer, not a tree of objects for every collection to trace — that a snapshot
 * still holds as the value it encodes.
 */
export class EncodedValue {
  constructor(readonly bytes: Uint8Array) {}
}

let scratch: MsgpackWriter | undefined;

/** The msgpack bytes of a plain value, in a buffer of their own (one shared writer, no 64 KB block each). */
export function packPlain(value: unknown): Buffer {
  const w = (scratch ??= new MsgpackWriter());
  w.value(value);
  const pieces = w.drain();
  return pieces.length === 1 ? Buffer.from(pieces[0] as Uint8Array) : Buffer.concat(pieces);
}

/** The value packPlain() encoded, decoded as a snapshot's reader decodes it (the same options). */
export function unpackPlain(bytes: Uint8Array): unknown {
  return packr.unpack(bytes);
}

/** First block without a size hint, and the largest block the writer grows to (a value larger than
 * that gets a block of its own). */
const MIN_BLOCK = 64 << 10;
const MAX_BLOCK = 8 << 20;

export class MsgpackWriter {
  /** Finished pieces of output, in order (subarrays of blocks, headers, msgpackr's output). */
  private readonly chunks: Uint8Array[] = [];
  private chunkBytes = 0;
  private buf: Buffer;
  private pos = 0;
  /** Start of the bytes of `buf` not yet in `chunks`. */
  private start = 0;

  /** `expected`: the number of bytes likely to be written (0 when unknown). */
  constructor(expected = 0) {
    this.buf = Buffer.allocUnsafeSlow(expected > 0 ? expected + (expected >> 3) + MIN_BLOCK : MIN_BLOCK);
  }

  /** Bytes written so far. */
  get size(): number {
    return this.chunkBytes + (this.pos - this.start);
  }

  /** Appends the encoding of a plain value. */
  value(v: unknown): void {
    switch (typeof v) {
      case 'string':
        this.string(v);
        return;
      case 'number':
        this.number(v);
        return;
      case 'boolean':
        this.ensure(1);
        this.buf[this.pos++] = v ? 0xc3 : 0xc2;
        return;
      case 'undefined':
        // msgpackr's default: fixext 1, type 0, data 0.
        this.ensure(3);
        this.buf[this.pos++] = 0xd4;
        this.buf[this.pos++] = 0;
        this.buf[this.pos++] = 0;
        return;
      case 'object':
        if (v === null) {
          this.ensure(1);
          this.buf[this.pos++] = 0xc0;
          return;
        }
        // A KV value, a certificate's bytes: msgpackr writes any Uint8Array as bin. Handing it to
        // msgpackr copied it twice (into msgpackr's buffer, which grows for it, then here): at a
        // gigabyte of 4 KiB values that was a third of a snapshot's time (issue #34).
        if (v instanceof Uint8Array) {
          this.bin(v);
          return;
        }
        if (Array.isArray(v) && Object.getPrototypeOf(v) === Array.prototype) {
          this.arrayHeader(v.length);
          for (let i = 0; i < v.length; i++) this.value(v[i]);
          return;
        }
        // Maps keyed by users' strings (Meta, headers) have no prototype (plain-data.ts,
        // input-fields.ts); msgpackr writes them exactly as plain objects.
        const proto: unknown = Object.getPrototypeOf(v);
        if (proto === Object.prototype || proto === null) {
          this.object(v as Record<string, unknown>);
          return;
        }
        if (v instanceof EncodedValue) {
          this.raw(v.bytes);
          return;
        }
        break;
    }
    this.raw(packr.pack(v));
  }

  /** msgpackr's header for an array of n items (the smallest one). */
  arrayHeader(n: number): void {
    this.ensure(5);
    const b = this.buf;
    if (n < 0x10) b[this.pos++] = 0x90 | n;
    else if (n < 0x10000) {
      b[this.pos++] = 0xdc;
      b[this.pos++] = n >> 8;
      b[this.pos++] = n & 0xff;
    } else {
      b[this.pos++] = 0xdd;
      b.writeUInt32BE(n, this.pos);
      this.pos += 4;
    }
  }

  /** msgpackr's header for a plain object of n fields (fixed-size map16). */
  mapHeader(n: number): void {
    if (n > 0xffff) throw new Error('an object with more than 65535 fields');
    this.ensure(3);
    this.buf[this.pos++] = 0xde;
    this.buf[this.pos++] = n >> 8;
    this.buf[this.pos++] = n & 0xff;
  }

  /**
   * Everything written, in order: one piece when it all fitted in the first buffer (a view of it,
   * which may have some unused capacity after it), else the pieces to join.
   */
  finish(): Uint8Array[] {
    this.cut();
    this.buf = Buffer.allocUnsafeSlow(0);
    this.pos = this.start = 0;
    return this.chunks;
  }

  /**
   * What was written since the last drain, in order, after which the writer starts over at the
   * start of its current buffer: the pieces are views of memory the next write reuses, so the
   * caller must be done with them first. Streaming a snapshot this way keeps one buffer for the
   * whole encoding instead of one the size of the snapshot.
   */
  drain(): Uint8Array[] {
    this.cut();
    const pieces = this.chunks.splice(0);
    this.chunkBytes = 0;
    this.pos = this.start = 0;
    return pieces;
  }

  private object(o: Record<string, unknown>): void {
    // msgpackr writes map16 and fills the count in afterwards; so does this.
    this.ensure(3);
    const buf = this.buf;
    const at = this.pos;
    buf[this.pos++] = 0xde;
    this.pos += 2;
    let n = 0;
    for (const key in o) {
      if (!Object.hasOwn(o, key)) continue;
      this.string(key);
      this.value(o[key]);
      n++;
    }
    if (n > 0xffff) throw new Error('an object with more than 65535 fields');
    // The header stays in its block even if later bytes went to another one.
    buf[at + 1] = n >> 8;
    buf[at + 2] = n & 0xff;
  }

  private number(v: number): void {
    this.ensure(9);
    const b = this.buf;
    if (v >>> 0 === v) {
      if (v < 0x80) b[this.pos++] = v;
      else if (v < 0x100) {
        b[this.pos++] = 0xcc;
        b[this.pos++] = v;
      } else if (v < 0x10000) {
        b[this.pos++] = 0xcd;
        b[this.pos++] = v >> 8;
        b[this.pos++] = v & 0xff;
      } else {
        b[this.pos++] = 0xce;
        b.writeUInt32BE(v, this.pos);
        this.pos += 4;
      }
    } else if (v >> 0 === v) {
      if (v >= -0x20) b[this.pos++] = 0x100 + v;
      else if (v >= -0x80) {
        b[this.pos++] = 0xd0;
        b[this.pos++] = v + 0x100;
      } else if (v >= -0x8000) {
        b[this.pos++] = 0xd1;
        b.writeInt16BE(v, this.pos);
        this.pos += 2;
      } else {
        b[this.pos++] = 0xd2;
        b.writeInt32BE(v, this.pos);
        this.pos += 4;
      }
    } else {
      b[this.pos++] = 0xcb;
      b.writeDoubleBE(v, this.pos);
      this.pos += 8;
    }
  }

  private string(s: string): void {
    const n = s.length;
    // As msgpackr: the header size is guessed from the length in UTF-16 units and the bytes are
    // moved if the UTF-8 length needs a bigger one.
    const guess = n < 0x20 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5;
    this.ensure(guess + 3 * n + 5);
    const b = this.buf;
    const at = this.pos;
    let len: number;
    if (n < 0x40) {
      // msgpackr's own loop (a lone surrogate is written as its 3-byte form, as there).
      let p = at + guess;
      for (let i = 0; i < n; i++) {
        let c1 = s.charCodeAt(i);
        let c2: number;
        if (c1 < 0x80) b[p++] = c1;
        else if (c1 < 0x800) {
          b[p++] = (c1 >> 6) | 0xc0;
          b[p++] = (c1 & 0x3f) | 0x80;
        } else if ((c1 & 0xfc00) === 0xd800 && ((c2 = s.charCodeAt(i + 1)) & 0xfc00) === 0xdc00) {
          c1 = 0x10000 + ((c1 & 0x03ff) << 10) + (c2 & 0x03ff);
          i++;
          b[p++] = (c1 >> 18) | 0xf0;
          b[p++] = ((c1 >> 12) & 0x3f) | 0x80;
          b[p++] = ((c1 >> 6) & 0x3f) | 0x80;
          b[p++] = (c1 & 0x3f) | 0x80;
        } else {
          b[p++] = (c1 >> 12) | 0xe0;
          b[p++] = ((c1 >> 6) & 0x3f) | 0x80;
          b[p++] = (c1 & 0x3f) | 0x80;
        }
      }
      len = p - at - guess;
    } else {
      len = b.write(s, at + guess, 'utf8');
    }
    let head: number;
    if (len < 0x20) {
      head = 1;
      b[at] = 0xa0 | len;
    } else if (len < 0x100) {
      head = 2;
      if (guess < 2) b.copyWithin(at + 2, at + guess, at + guess + len);
      b[at] = 0xd9;
      b[at + 1] = len;
    } else if (len < 0x10000) {
      head = 3;
      if (guess < 3) b.copyWithin(at + 3, at + guess, at + guess + len);
      b[at] = 0xda;
      b[at + 1] = len >> 8;
      b[at + 2] = len & 0xff;
    } else {
      head = 5;
      if (guess < 5) b.copyWithin(at + 5, at + guess, at + guess + len);
      b[at] = 0xdb;
      b.writeUInt32BE(len, at + 1);
    }
    this.pos = at + head + len;
  }

  /** msgpackr's bin 8/16/32 of `bytes` (the smallest header). */
  private bin(bytes: Uint8Array): void {
    const n = bytes.length;
    this.ensure(5 + n);
    const b = this.buf;
    if (n < 0x100) {
      b[this.pos++] = 0xc4;
      b[this.pos++] = n;
    } else if (n < 0x10000) {
      b[this.pos++] = 0xc5;
      b[this.pos++] = n >> 8;
      b[this.pos++] = n & 0xff;
    } else {
      b[this.pos] = 0xc6;
      b.writeUInt32BE(n, this.pos + 1);
      this.pos += 5;
    }
    b.set(bytes, this.pos);
    this.pos += n;
  }

  private raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    this.cut();
    // Growing blocks: few allocations for a large output, little waste for a small one.
    this.buf = Buffer.allocUnsafeSlow(Math.max(Math.min(Math.max(2 * this.buf.length, MIN_BLOCK), MAX_BLOCK), n));
    this.pos = this.start = 0;
  }

  private cut(): void {
    if (this.pos > this.start) {
      this.chunks.push(this.buf.subarray(this.start, this.pos));
      this.chunkBytes += this.pos - this.start;
    }
    this.start = this.pos;
  }
}
