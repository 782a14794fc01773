// Decoding a state snapshot a step at a time, so that a restore can rebuild a large state between
// other work instead of in one ~1 s stall (100,000 nodes). msgpackr decodes every value; this file
// only walks the few outer containers itself — the snapshot's top map, its `state` map and each
// table's map — reading their headers, and decodes each array found there a batch of items per step
// (msgpackr's unpackMultiple, stopped after the batch). The result is the value packr.unpack() gives
// for the same bytes: a map whose keys are not plain strings is handed to msgpackr whole instead.
import { Packr } from 'msgpackr';

/** The same options as the snapshot's encoder and decoder (snapshot.ts). */
const packr = new Packr({ useRecords: false });

/** Outer map levels walked here: the snapshot, its state, a table. Deeper values are decoded whole. */
const WALKED_DEPTH = 3;

/**
 * Steps decoding `bytes` (one msgpack value): each decodes about `step` array items at most, and the
 * generator returns the value. Throws, as packr.unpack() would, on bytes that are not one value.
 */
export function* decodeSteps(bytes: Uint8Array, step = 512): Generator<void, unknown, void> {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  let pos = 0;

  /** Decodes up to `max` values from `pos`, handing each to `take`; returns how many. */
  const decodeRun = (max: number, take: (v: unknown) => void): number => {
    if (pos >= buf.length) throw new Error('unexpected end of snapshot data');
    let got = 0;
    let end = 0;
    packr.unpackMultiple(buf.subarray(pos), (v: unknown, _start?: number, stop?: number) => {
      take(v);
      end = stop ?? end;
      return ++got < max ? undefined : false;
    });
    if (got < max) throw new Error('unexpected end of snapshot data');
    pos += end;
    return got;
  };
  const one = (): unknown => {
    let value: unknown;
    decodeRun(1, (v) => (value = v));
    return value;
  };

  /** A map or array header at `pos` (consumed), or null (nothing consumed). */
  const header = (): { map: boolean; n: number } | null => {
    if (pos >= buf.length) throw new Error('unexpected end of snapshot data');
    const b = buf[pos];
    if (b >= 0x80 && b <= 0x8f) return (pos += 1), { map: true, n: b & 0x0f };
    if (b >= 0x90 && b <= 0x9f) return (pos += 1), { map: false, n: b & 0x0f };
    if (b === 0xde || b === 0xdc) {
      if (pos + 3 > buf.length) throw new Error('unexpected end of snapshot data');
      const n = buf.readUInt16BE(pos + 1);
      return (pos += 3), { map: b === 0xde, n };
    }
    if (b === 0xdf || b === 0xdd) {
      if (pos + 5 > buf.length) throw new Error('unexpected end of snapshot data');
      const n = buf.readUInt32BE(pos + 1);
      return (pos += 5), { map: b === 0xdf, n };
    }
    return null;
  };

  function* value(depth: number): Generator<void, unknown, void> {
    const start = pos;
    const h = header();
    if (!h) return one();
    if (!h.map) {
      const items: unknown[] = [];
      const push = (v: unknown) => void items.push(v);
      while (items.length < h.n) {
        decodeRun(Math.min(step, h.n - items.length), push);
        yield;
      }
      return items;
    }
    if (depth >= WALKED_DEPTH) {
      pos = start;
      return one();
    }
    const out: Record<string, unknown> = {};
    for (let i = 0; i < h.n; i++) {
      const key = one();
      // msgpackr renames some keys and turns others into strings: let it decode such a map itself.
      if (typeof key !== 'string' || key === '__proto__') {
        pos = start;
        return one();
      }
      out[key] = yield* value(depth + 1);
    }
    return out;
  }

  const result = yield* value(0);
  if (pos !== buf.length) throw new Error(`${buf.length - pos} bytes after the snapshot value`);
  return result;
}
