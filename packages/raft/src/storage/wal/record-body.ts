// A WAL record's body as msgpack — the map msgpackr would give for the same record, and read back by
// msgpackr's unpack — written as pieces: the small parts (keys, numbers, the hard state, each entry's
// header and small payloads) copied into one buffer, and each large entry payload referenced where it
// already is. A write load's record is tens of entries of KiBs; packing it copied every payload into
// msgpackr's buffer, the largest single copy left on a write's way to disk after the framing's
// (docs/benchmarks/history.md, "Where a 1 GiB load's CPU goes"). The pieces go to the disk in one
// positioned writev (segments.ts).
import type { Packr } from 'msgpackr';
import type { EntryType, HardState } from '../../core/types';

/** One entry as stored: its index is the record's first index plus its position. */
export type StoredEntry = [term: number, type: EntryType, data: Uint8Array];

/** One record. Every field is optional; together they say what the append or compaction did. */
export interface WalRecord {
  /** The hard state as of this record. */
  h?: HardState;
  /** The index of e[0]. */
  f?: number;
  e?: StoredEntry[];
  /** Entries at or below this index are gone (a snapshot covers them). */
  c?: number;
  /** The whole log is gone (an installed snapshot replaced it). */
  r?: true;
}

/** A payload at least this large is referenced, not copied: below it a piece costs more than the copy. */
const REFERENCED_BYTES = 1024;
/**
 * At most this many payloads referenced per record: with the copied parts between them, the pieces
 * stay under Linux's IOV_MAX (1,024) for one writev, so the record is one synced write (libuv splits
 * a longer list into several, each synced on an O_DSYNC file). The rest are copied.
 */
const MAX_REFERENCED = 500;

/** msgpack's tags for a length or number in 8, 16 and 32 bits (null: the type has no 8-bit form). */
type SizeTags = readonly [number | null, number, number];
const UINT: SizeTags = [0xcc, 0xcd, 0xce];
const BIN: SizeTags = [0xc4, 0xc5, 0xc6];
const ARRAY: SizeTags = [null, 0xdc, 0xdd];

/** Bytes of `n` (at most 32 bits) after the tag of the smallest form in `tags` that holds it. */
function sizedBytes(n: number, tags: SizeTags): number {
  return tags[0] !== null && n <= 0xff ? 2 : n <= 0xffff ? 3 : 5;
}

function writeSized(buf: Buffer, at: number, n: number, tags: SizeTags): number {
  if (tags[0] !== null && n <= 0xff) {
    buf[at] = tags[0];
    buf[at + 1] = n;
    return at + 2;
  }
  if (n <= 0xffff) {
    buf[at] = tags[1];
    buf.writeUInt16BE(n, at + 1);
    return at + 3;
  }
  buf[at] = tags[2];
  buf.writeUInt32BE(n, at + 1);
  return at + 5;
}

/** Bytes of msgpack's smallest encoding of the non-negative integer `n` (float 64 past 32 bits, exact for safe integers). */
function uintBytes(n: number): number {
  return n < 0x80 ? 1 : n <= 0xffffffff ? sizedBytes(n, UINT) : 9;
}

function writeUint(buf: Buffer, at: number, n: number): number {
  if (n < 0x80) {
    buf[at] = n;
    return at + 1;
  }
  if (n <= 0xffffffff) return writeSized(buf, at, n, UINT);
  buf[at] = 0xcb;
  buf.writeDoubleBE(n, at + 1);
  return at + 9;
}

function arrayHeaderBytes(count: number): number {
  return count < 16 ? 1 : sizedBytes(count, ARRAY);
}

function writeArrayHeader(buf: Buffer, at: number, count: number): number {
  if (count >= 16) return writeSized(buf, at, count, ARRAY);
  buf[at] = 0x90 | count;
  return at + 1;
}

/** A one-letter key (fixstr). */
function writeKey(buf: Buffer, at: number, key: string): number {
  buf[at] = 0xa1;
  buf[at + 1] = key.charCodeAt(0);
  return at + 2;
}

/**
 * `record`'s body in pieces whose concatenation is msgpack of the record (a map of its fields);
 * `packr` encodes the hard state. The pieces reference the entries' payloads: they must not change
 * until the record is written (a proposal's or a received append's bytes never do).
 */
export function recordBody(packr: Packr, record: WalRecord): Uint8Array[] {
  const hard = record.h ? packr.pack(record.h) : null;
  const entries = record.e;
  let fields = 0;
  let small = 0;
  // Each field is a one-letter key (2 bytes) and its value.
  if (hard) {
    fields++;
    small += 2 + hard.length;
  }
  if (record.f !== undefined) {
    fields++;
    small += 2 + uintBytes(record.f);
  }
  if (record.c !== undefined) {
    fields++;
    small += 2 + uintBytes(record.c);
  }
  if (record.r) {
    fields++;
    small += 3;
  }
  let referenced = 0;
  if (entries) {
    fields++;
    small += 2 + arrayHeaderBytes(entries.length);
    for (const [term, type, data] of entries) {
      small += 1 + uintBytes(term) + uintBytes(type) + sizedBytes(data.length, BIN);
      if (data.length >= REFERENCED_BYTES && referenced < MAX_REFERENCED) referenced++;
      else small += data.length;
    }
  }
  small += 1; // the map's header (fewer than 16 fields)
  const buf = Buffer.allocUnsafe(small);
  const pieces: Uint8Array[] = [];
  let at = 0;
  let from = 0;
  buf[at++] = 0x80 | fields;
  if (hard) {
    at = writeKey(buf, at, 'h');
    at += hard.copy(buf, at);
  }
  if (record.f !== undefined) at = writeUint(buf, writeKey(buf, at, 'f'), record.f);
  if (record.c !== undefined) at = writeUint(buf, writeKey(buf, at, 'c'), record.c);
  if (record.r) {
    at = writeKey(buf, at, 'r');
    buf[at++] = 0xc3;
  }
  if (entries) {
    at = writeArrayHeader(buf, writeKey(buf, at, 'e'), entries.length);
    let left = MAX_REFERENCED;
    for (const [term, type, data] of entries) {
      buf[at++] = 0x93;
      at = writeUint(buf, at, term);
      at = writeUint(buf, at, type);
      at = writeSized(buf, at, data.length, BIN);
      if (data.length >= REFERENCED_BYTES && left > 0) {
        left--;
        pieces.push(buf.subarray(from, at), data);
        from = at;
      } else {
        buf.set(data, at);
        at += data.length;
      }
    }
  }
  if (at !== small) throw new Error(`WAL record body: wrote ${at} of ${small} bytes`);
  if (at > from) pieces.push(buf.subarray(from, at));
  return pieces;
}
