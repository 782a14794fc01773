// Decoding a stamped entry, `[command, id, at]` or `[command, id, at, 1]` (commands.ts), on every
// server for every write. msgpackr decodes a source shorter than 140 bytes in JavaScript and hands a
// longer one's strings to its native extractor, whose call costs more than the strings themselves
// for a small entry: the stamp's ~24 bytes put a typical catalog register (~130 bytes) over that
// line. So the stamp is read here from the entry's end and msgpackr is given only the command's
// bytes, as it was before entries were stamped.
//
// The stamp's layout is ours, and every guess is checked: msgpack values are prefix-free, so if the
// bytes between the array header and the id's header decode as exactly one value, that value is
// the array's first element and the id and stamp follow it as read. Anything else (a long or non-
// ASCII id, a small-integer stamp) returns undefined and the caller decodes the whole entry.
import type { RequestStamp } from './request-table';

const FIXARRAY_3 = 0x93;
const FIXARRAY_4 = 0x94;
const FIXSTR = 0xa0;
const FLOAT64 = 0xcb;
/** The fourth element of a re-sent copy: positive fixint 1. */
const RESENT = 0x01;

const scratch = new Uint8Array(8);
const scratchView = new DataView(scratch.buffer);

/**
 * The command's bytes and the stamp of a stamped entry in its usual layout, or undefined.
 * `decode` must decode exactly one value filling the bytes it is given, or throw.
 */
export function decodeStamped<C>(b: Uint8Array, decode: (bytes: Uint8Array) => C): { cmd: C; request: RequestStamp } | undefined {
  const head = b[0];
  if (head !== FIXARRAY_3 && head !== FIXARRAY_4) return undefined;
  let end = b.length;
  if (head === FIXARRAY_4) {
    if (b[end - 1] !== RESENT) return undefined;
    end--;
  }
  const atPos = end - 9;
  if (atPos < 3 || b[atPos] !== FLOAT64) return undefined;
  // The id's bytes are ASCII (< 0x80) and its fixstr header is ≥ 0xa0: walk back to the header.
  let idStart = atPos;
  while (idStart > 2 && b[idStart - 1] < 0x80) idStart--;
  const idLength = atPos - idStart;
  const header = idStart - 1;
  if (idLength === 0 || idLength > 31 || b[header] !== FIXSTR + idLength) return undefined;
  let cmd: C;
  try {
    cmd = decode(b.subarray(1, header));
  } catch {
    return undefined;
  }
  for (let i = 0; i < 8; i++) scratch[i] = b[atPos + 1 + i];
  const at = scratchView.getFloat64(0);
  // One flat string (a string built a character at a time is a chain the window's parse would flatten).
  const id = (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength)).toString('latin1', idStart, atPos);
  return { cmd, request: head === FIXARRAY_4 ? { id, at, resent: true } : { id, at } };
}
