// GET /v1/kv/<prefix>?recurse over many keys, kept up to date instead of walked again (issue #16).
// At 100,000 keys a recurse read walked every key under the prefix (twice: entries and index) and
// made an output per entry — ~230 ms of event loop after any write. A prefix whose answer holds at
// least KEPT_MIN_ENTRIES entries keeps its keys, their outputs (made once per entry, frozen: the
// HTTP layer keeps the JSON bytes of runs of them) and its index, and follows the table's journal
// of changed keys (KvTable.keyChangesSince): a changed key under the prefix is replaced, inserted
// or removed where a binary search puts it. Its index only grows: every change carries the newest
// Raft index, and tombstones are never removed. A few prefixes are kept (the most recently read).
import { kvEntryOut, type KvEntry, type KvEntryOut } from './kv-records';
import type { KvTable } from './kv-table';

/** Smaller answers are built directly: walking them is cheap, keeping them would cost memory. */
const KEPT_MIN_ENTRIES = 1000;
/** Prefixes kept per table; the least recently read is dropped first. */
const MAX_KEPT = 8;
/** More changed keys than this since the last read: one walk of the prefix instead. */
const MAX_FOLLOWED = 512;

const outputs = new WeakMap<KvEntry, KvEntryOut>();

/** The entry's output, made once per stored entry (entries are replaced on write, never changed). */
export function keptKvOut(e: KvEntry): KvEntryOut {
  let out = outputs.get(e);
  if (out === undefined) {
    out = Object.freeze(kvEntryOut(e)) as KvEntryOut;
    outputs.set(e, out);
  }
  return out;
}

class KvListing {
  private keys: string[] = [];
  private outs: KvEntryOut[] = [];
  /** The newest entry or tombstone index under the prefix (0: none). */
  private max = 0;
  private version: number;

  constructor(
    private readonly table: KvTable,
    private readonly prefix: string,
    entries: readonly KvEntry[],
    max: number,
    version: number,
  ) {
    this.reset(entries, max);
    this.version = version;
  }

  get size(): number {
    return this.outs.length;
  }

  /** The prefix's outputs in key order and its newest index. Do not modify. */
  update(): { outs: readonly KvEntryOut[]; max: number } {
    const changes = this.table.keyChangesSince(this.version);
    const changed = changes.keys === null ? null : new Set(changes.keys);
    if (changed !== null && changed.size <= MAX_FOLLOWED) {
      for (const key of changed) if (key.startsWith(this.prefix)) this.follow(key);
    } else {
      const { entries, max } = walk(this.table, this.prefix);
      this.reset(entries, max);
    }
    this.version = changes.version;
    return { outs: this.outs, max: this.max };
  }

  private reset(entries: readonly KvEntry[], max: number): void {
    this.keys = entries.map((e) => e.Key);
    this.outs = entries.map(keptKvOut);
    this.max = max;
  }

  private follow(key: string): void {
    this.max = Math.max(this.max, this.table.keyIndex(key));
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.keys[mid] < key) lo = mid + 1;
      else hi = mid;
    }
    const present = this.keys[lo] === key;
    const entry = this.table.get(key);
    if (entry === undefined) {
      if (present) {
        this.keys.splice(lo, 1);
        this.outs.splice(lo, 1);
      }
    } else if (present) {
      this.outs[lo] = keptKvOut(entry);
    } else {
      this.keys.splice(lo, 0, key);
      this.outs.splice(lo, 0, keptKvOut(entry));
    }
  }
}

function walk(table: KvTable, prefix: string): { entries: KvEntry[]; max: number } {
  const { entries, index } = table.listWithIndex(prefix);
  // listWithIndex answers the table index when nothing was under the prefix; keep the raw max here.
  return { entries, max: entries.length === 0 && index === table.tableIndex ? 0 : index };
}

const listings = new WeakMap<KvTable, Map<string, KvListing>>();

/**
 * A ?recurse read of `prefix`: the outputs of its entries in key order (shared and frozen; do not
 * modify) and its index (the newest entry or tombstone under the prefix; the table index for the
 * empty prefix or when nothing was ever under it, as Consul's kvsListTxn).
 */
export function kvRecurse(table: KvTable, prefix: string): { outs: KvEntryOut[]; index: number } {
  let kept = listings.get(table);
  if (!kept) listings.set(table, (kept = new Map()));
  const indexOf = (max: number) => (prefix === '' || max === 0 ? table.tableIndex : max);
  let listing = kept.get(prefix);
  if (listing) {
    // Most recently read last: Map order is insertion order.
    kept.delete(prefix);
    kept.set(prefix, listing);
    const { outs, max } = listing.update();
    if (listing.size < KEPT_MIN_ENTRIES) kept.delete(prefix);
    return { outs: outs.slice(), index: indexOf(max) };
  }
  const version = table.keyChangesSince(-1).version;
  const { entries, max } = walk(table, prefix);
  if (entries.length >= KEPT_MIN_ENTRIES) {
    kept.set(prefix, (listing = new KvListing(table, prefix, entries, max, version)));
    if (kept.size > MAX_KEPT) kept.delete(kept.keys().next().value as string);
  }
  return { outs: entries.map(keptKvOut), index: indexOf(max) };
}
