// Length-prefixed frames: a 4-byte big-endian body length, then a msgpack body.
import { Packr } from 'msgpackr';

export const DEFAULT_MAX_FRAME_BYTES = 512 * 1024 * 1024;

export class FrameEncoder {
  private readonly packr = new Packr({ useRecords: false });

  encode(value: unknown): Buffer {
    const body = this.packr.pack(value);
    const frame = Buffer.allocUnsafe(4 + body.length);
    frame.writeUInt32BE(body.length, 0);
    body.copy(frame, 4);
    return frame;
  }
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
    let buf = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
    const values: unknown[] = [];
    let offset = 0;
    while (buf.length - offset >= 4) {
      const length = buf.readUInt32BE(offset);
      if (length > this.maxFrameBytes) throw new Error(`frame of ${length} bytes exceeds ${this.maxFrameBytes}`);
      if (buf.length - offset - 4 < length) break;
      // Copy the body out: decoded byte fields may keep references into it, and the
      // socket's chunk can be much larger than one frame.
      const body = Buffer.from(buf.subarray(offset + 4, offset + 4 + length));
      values.push(this.packr.unpack(body));
      offset += 4 + length;
    }
    buf = offset === buf.length ? Buffer.alloc(0) : buf.subarray(offset);
    this.pending = buf.length > 0 ? [buf] : [];
    this.pendingBytes = buf.length;
    this.needed = buf.length >= 4 ? 4 + buf.readUInt32BE(0) : 4;
    return values;
  }
}
