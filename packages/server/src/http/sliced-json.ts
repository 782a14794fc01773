// Large JSON answers written in slices (issue #16). JSON.stringify of a 100,000-node catalog (15 MB)
// held the event loop for ~50 ms, and turning the text into bytes for another ~60 ms, during which
// no write, heartbeat or other read made progress. A large array is written element by element
// instead: a few milliseconds of encoding, then the chunk goes out and the loop gets a turn
// (setImmediate, or the socket's 'drain' when the client reads slower than we write). The value is
// a point-in-time answer already (rows are never changed in place), so later slices see the same
// data as the first. Frozen elements — shared rows, like the catalog's node listing — keep their
// JSON between answers, so a write costs re-encoding the rows it changed, not all of them.
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { exactJsonText } from './json-text';

/** Arrays at least this long are written in slices; shorter ones in one piece (cheaper). */
export const SLICED_MIN_ITEMS = 1000;
/** Encoding time per slice before the loop gets a turn. */
const SLICE_MS = 4;
/** Bytes (UTF-16 units, roughly) per slice, so that one write never holds a huge buffer. */
const SLICE_CHARS = 256 * 1024;

/** The JSON of each frozen (shared, unchanging) element, for as long as the element lives. */
const fragments = new WeakMap<object, string>();

function encodeElement(item: unknown): string {
  if (typeof item !== 'object' || item === null || !Object.isFrozen(item)) return exactJsonText(item, JSON.stringify);
  let text = fragments.get(item);
  if (text === undefined) {
    text = exactJsonText(item, JSON.stringify);
    fragments.set(item, text);
  }
  return text;
}

/** Whether `value` is an answer this module writes. */
export function isLargeArray(value: unknown): value is readonly unknown[] {
  return Array.isArray(value) && value.length >= SLICED_MIN_ITEMS;
}

/**
 * Writes `items` as a JSON array (chunked transfer encoding, no Content-Length), yielding to the
 * event loop between slices. Stops early when the client goes away. Resolves when done.
 */
export async function writeSlicedJsonArray(
  res: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
  items: readonly unknown[],
): Promise<void> {
  res.writeHead(status, headers);
  let i = 0;
  while (i < items.length) {
    if (res.destroyed) return;
    const started = performance.now();
    const parts: string[] = [i === 0 ? '[' : ','];
    let chars = 0;
    for (;;) {
      const text = encodeElement(items[i] === undefined ? null : items[i]);
      parts.push(text);
      chars += text.length;
      i++;
      if (i >= items.length) break;
      // Checking the clock every element would cost more than small elements do.
      if (chars >= SLICE_CHARS || ((i & 63) === 0 && performance.now() - started >= SLICE_MS)) break;
      parts.push(',');
    }
    if (i >= items.length) parts.push(']');
    const flowing = res.write(parts.join(''));
    if (i >= items.length) break;
    await (flowing ? new Promise<void>((resolve) => setImmediate(resolve)) : drained(res));
  }
  if (!res.destroyed) res.end();
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
