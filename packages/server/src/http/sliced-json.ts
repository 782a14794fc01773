// Large JSON answers written in slices (issue #16). JSON.stringify of a 100,000-node catalog (15 MB)
// held the event loop for ~50 ms, and turning the text into bytes for another ~60 ms, during which
// no write, heartbeat or other read made progress. A large array is written a slice at a time
// instead: at most a couple of milliseconds or 1 MB, then the slice goes out and the loop gets a
// turn. Slices of all large answers take turns in one lane (slice-lane.ts; the agent makes it and
// hands it to the HTTP app and to its store, whose listing builds take turns there too) that, while
// the loop has other work, keeps them to a quarter of it; a client reading slower than we write holds its
// answer at the socket's 'drain', outside the lane. The value is a point-in-time answer already
// (rows are never changed in place), so later slices see the same data as the first.
//
// Frozen elements — shared rows, like the catalog's node listing, health entries and KV outputs —
// never change, so the bytes of a run of them are kept (a Block, keyed by its first element) and
// written again as they are while the same elements follow each other: a read of an unchanged
// 100,000-node listing encodes nothing and copies nothing. A CPU profile of the leader beside a
// reader looping over that listing showed ~80 ms of CPU per answer going to per-element lookups,
// joining and UTF-8 conversion (the reader took 90 % of the leader and writes fell to 5 % of their
// rate alone). A write re-encodes only the block its changed row falls in: a new block starts
// where the old one did and stops at the next element that starts a kept block, so an insertion
// does not shift every block after it.
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { exactJsonText } from './json-text';
import type { SliceLane } from './slice-lane';

/** Arrays at least this long are written in slices; shorter ones in one piece (cheaper). */
export const SLICED_MIN_ITEMS = 1000;
/**
 * Encoding time per slice before the loop gets a turn. Every turn a slice takes is added to the
 * latency of each step of a write in flight (HTTP, Raft, disk, apply each wait for a turn), so a
 * slice is kept short.
 */
const SLICE_MS = 2;
/** Bytes per slice: handing the socket 1 MB (one writev) takes ~1.5 ms. */
const SLICE_BYTES = 1024 * 1024;
/** Frozen elements per kept block (~20 KB of catalog nodes; re-encoding one costs ~0.1 ms). */
const BLOCK_ITEMS = 128;

/** The bytes of a run of frozen elements: `,e1,e2,…,en` (each preceded by its comma). */
interface Block {
  items: readonly object[];
  bytes: Buffer;
}

/**
 * Kept blocks by their first element (weak: a block lives as long as its first row). Keyed by
 * frozen rows, not owned by an app: the bytes of a run of rows are right wherever they are written.
 */
const blocks = new WeakMap<object, Block>();

const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');

function isFrozenObject(item: unknown): item is object {
  return typeof item === 'object' && item !== null && Object.isFrozen(item);
}

function encode(item: unknown): string {
  return exactJsonText(item === undefined ? null : item, JSON.stringify);
}

/** The kept block starting at items[at], if the same elements still follow each other there. */
function keptBlock(items: readonly unknown[], at: number): Block | undefined {
  const block = blocks.get(items[at] as object);
  if (block === undefined || at + block.items.length > items.length) return undefined;
  for (let k = 1; k < block.items.length; k++) if (block.items[k] !== items[at + k]) return undefined;
  return block;
}

/**
 * Encodes and keeps a block of frozen elements from items[at]. It runs up to the next element that
 * starts a kept block when that is near (≤ 2 blocks on), so that the blocks after a change are
 * found again and a block that lost or gained rows is not split into ever smaller ones.
 */
function newBlock(items: readonly unknown[], at: number): Block {
  const limit = Math.min(items.length, at + 2 * BLOCK_ITEMS);
  let end = at + 1;
  while (end < limit && isFrozenObject(items[end]) && !blocks.has(items[end] as object)) end++;
  if (end === at + 2 * BLOCK_ITEMS) end = at + BLOCK_ITEMS; // no kept block near: a new one of the usual size
  const members = items.slice(at, end) as object[];
  let text = '';
  for (const item of members) text += ',' + encode(item);
  const block = { items: members, bytes: Buffer.from(text) };
  blocks.set(members[0], block);
  return block;
}

/** Whether `value` is an answer this module writes. */
export function isLargeArray(value: unknown): value is readonly unknown[] {
  return Array.isArray(value) && value.length >= SLICED_MIN_ITEMS;
}

/**
 * Writes `items` as a JSON array (chunked transfer encoding, no Content-Length), yielding to the
 * event loop between slices, which take turns in `lane` with every other large answer's (and the
 * agent's store's listing builds: the composition hands both the one lane). Stops early when the
 * client goes away. Resolves when done.
 */
export async function writeSlicedJsonArray(
  res: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
  items: readonly unknown[],
  lane: SliceLane,
): Promise<void> {
  res.writeHead(status, headers);
  let i = 0;
  while (i < items.length) {
    if (res.destroyed) return;
    await lane.turn();
    const started = performance.now();
    let flowing = true;
    try {
      if (res.destroyed) return;
      const parts: Buffer[] = [];
      let bytes = 0;
      let text = '';
      const flushText = () => {
        if (text === '') return;
        const b = Buffer.from(text);
        parts.push(b);
        bytes += b.length;
        text = '';
      };
      while (i < items.length && bytes + text.length < SLICE_BYTES) {
        const item = items[i];
        if (isFrozenObject(item)) {
          flushText();
          const block = keptBlock(items, i) ?? newBlock(items, i);
          // The block's bytes start with a comma; the array's first element has none.
          parts.push(i === 0 ? Buffer.concat([OPEN, block.bytes.subarray(1)]) : block.bytes);
          bytes += block.bytes.length;
          i += block.items.length;
          if (performance.now() - started >= SLICE_MS) break;
        } else {
          text += (i === 0 ? '[' : ',') + encode(item);
          i++;
          // Checking the clock every element would cost more than small elements do.
          if ((i & 63) === 0 && performance.now() - started >= SLICE_MS) break;
        }
      }
      flushText();
      if (i >= items.length) parts.push(CLOSE);
      // Corked, a slice's buffers (each its own chunk) leave in one writev, none of them copied.
      res.cork();
      for (const part of parts) flowing = res.write(part) && flowing;
      res.uncork();
    } finally {
      lane.done(performance.now() - started);
    }
    // A client reading slower than we write holds its answer here, outside the lane.
    if (!flowing && i < items.length) await drained(res);
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
