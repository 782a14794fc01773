// Length-prefixed frames: a 4-byte big-endian body length, then a msgpack body.
import { Packr, RESERVE_START_SPACE } from 'msgpackr';

export const DEFAULT_MAX_FRAME_BYTES = 512 * 1024 * 1024;

/**
 * A byte field at least this long, last in a frame, travels without being copied into the frame
 * (FrameEncoder.encode); a frame at least this long, received over several socket reads, is decoded
 * from the one buffer they were joined into (FrameDecoder.push).
 */
export const BULK_BYTES = 64 * 1024;

/** An encoded frame: one buffer, or parts to be written back to back (a bulk byte field left uncopied). */
export type EncodedFrame = Buffer | readonly Buffer[];

/** msgpack's bin 8 of no bytes: the placeholder a bulk field is packed as, and replaced. */
const EMPTY_BIN = Buffer.from([0xc4, 0x00]);
const EMPTY = Buffer.alloc(0);

export class FrameEncoder {
  private readonly packr = new Packr({ useRecords: false });

  /**
   * `value` framed, in one buffer: msgpackr leaves room for the length in front of the body, so the
   * body is not copied behind it into a new buffer. An append of a write load's batch is hundreds of
   * KiB, encoded for each follower; that copy was a fresh buffer each time, memory outside V8's heap
   * that counts towards its next collection (docs/benchmarks/history.md). The frame is a view of
   * msgpackr's buffer, which never writes over what it has handed out (it continues after it, or in
   * a new buffer).
   */
  encode(value: unknown): Buffer {
    const frame = this.packr.pack(value, RESERVE_START_SPACE | 4);
    frame.writeUInt32BE(frame.length - 4, 0);
    return frame;
  }

  /**
   * `value` framed, as encode() does, except when it is an array whose last element is a plain
   * object whose last field holds BULK_BYTES or more bytes (a snapshot piece's `data`): those bytes
   * are not copied, and the frame comes back as parts, the second of them the bytes themselves. A
   * 1 MiB piece was copied twice on its way out (into msgpack, then into the frame), and the garbage
   * of those copies cost a leader with a large state a major GC every few dozen pieces (issue #34).
   * The bytes on the wire are the same msgpack either way: the field is packed as an empty bin 8,
   * and that is replaced by a bin 32 header.
   */
  encodeParts(value: unknown): EncodedFrame {
    const bulk = bulkTail(value);
    if (!bulk) return this.encode(value);
    const [head, bytes] = bulk;
    const packed = this.packr.pack(head);
    // Always so for a plain object's last field; anything else is framed whole.
    if (packed.length < 2 || !packed.subarray(packed.length - 2).equals(EMPTY_BIN)) return this.encode(value);
    const prefix = packed.length - 2;
    const frame = Buffer.allocUnsafe(4 + prefix + 5);
    frame.writeUInt32BE(prefix + 5 + bytes.length, 0);
    packed.copy(frame, 4, 0, prefix);
    frame[4 + prefix] = 0xc6; // bin 32
    frame.writeUInt32BE(bytes.length, 4 + prefix + 1);
    return [frame, Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)];
  }
}

/** The value with its bulk tail replaced by an empty placeholder, and the bytes; or null. */
function bulkTail(value: unknown): [unknown[], Uint8Array] | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  const last: unknown = value[value.length - 1];
  if (typeof last !== 'object' || last === null || Object.getPrototypeOf(last) !== Object.prototype) return null;
  const keys = Object.keys(last);
  const key = keys[keys.length - 1];
  const bytes = key === undefined ? undefined : (last as Record<string, unknown>)[key];
  if (!(bytes instanceof Uint8Array) || bytes.length < BULK_BYTES || bytes.length > 0xffffffff) return null;
  // A spread keeps the field's place: the placeholder is still the last thing packed.
  return [[...value.slice(0, -1), { ...last, [key]: EMPTY }], bytes];
}

/** Turns a byte stream, cut anywhere, back into the values that were framed. */
export class FrameDecoder {
  private readonly packr = new Packr({ useRecords: false });
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes needed before the next frame is complete; avoids re-joining a large frame per chunk. */
  private needed = 4;

  constructor(private readonly maxFrameBytes = DEFAULT_MAX_FRAME_BYTES) {}

  /** Returns the complete frames now available; throws if a frame announces an oversize body. */
  push(chunk: Buffer): unknown[] {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes < this.needed) return [];
    const joined = this.pending.length > 1;
    let buf = joined ? Buffer.concat(this.pending, this.pendingBytes) : this.pending[0];
    const values: unknown[] = [];
    let offset = 0;
    while (buf.length - offset >= 4) {
      const length = buf.readUInt32BE(offset);
      if (length > this.maxFrameBytes) throw new Error(`frame of ${length} bytes exceeds ${this.maxFrameBytes}`);
      if (buf.length - offset - 4 < length) break;
      const view = buf.subarray(offset + 4, offset + 4 + length);
      // Decoded byte fields keep references into the body, so a body that is a view of a socket's
      // chunk (much larger than a small frame) is copied out. A large frame that came in several
      // reads was just joined into a buffer of its own (plus at most the start of the next frame):
      // it is decoded in place, one copy of it, not two.
      const body = joined && offset === 0 && length >= BULK_BYTES ? view : Buffer.from(view);
      values.push(this.packr.unpack(body));
      offset += 4 + length;
    }
    buf = offset === buf.length ? EMPTY : buf.subarray(offset);
    this.pending = buf.length > 0 ? [buf] : [];
    this.pendingBytes = buf.length;
    this.needed = buf.length >= 4 ? 4 + buf.readUInt32BE(0) : 4;
    return values;
  }
}
