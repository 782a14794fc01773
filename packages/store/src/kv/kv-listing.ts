// GET /v1/kv/<prefix>?recurse over many keys, kept up to date instead of walked again (issue #16).
// At 100,000 keys a recurse read walked every key under the prefix (twice: entries and index) and
// made an output per entry — ~230 ms of event loop after any write. A prefix whose answer holds at
// least KEPT_MIN_ENTRIES entries keeps its keys, their outputs (made once per entry, frozen: the
// HTTP layer keeps the JSON bytes of runs of them) and its index, and follows the table's journal
// of changed keys (KvTable.keyChangesSince): a changed key under the prefix is replaced, inserted
// or removed where a binary search puts it. Its index only grows: every change carries the newest
// Raft index, and tombstones are never removed. A few prefixes are kept (the most recently read).
// Walking a large prefix the first time (or when the journal cannot tell) runs in steps a reader
// that can wait does not hold the event loop for (catalog/listing-steps.ts).
import { resultOf, ROWS_PER_YIELD, SlicedBuild, type BuildSteps, type ListingBuilds } from '../catalog/listing-steps';
import { kvEntryOut, type KvEntry, type KvEntryOut } from './kv-records';
import type { KvTable } from './kv-table';
import { ListingKey } from '../kept-listings';

/** Smaller answers are built directly: walking them is cheap, keeping them would cost memory. */
const KEPT_MIN_ENTRIES = 1000;
/** Prefixes kept per table; the least recently read is dropped first. */
const MAX_KEPT = 8;
/** More changed keys than this since the last read: one walk of the prefix instead. */
const MAX_FOLLOWED = 512;

/** Keyed by entry, not per table: an output is right while its entry is, whichever listing shows it. */
const outputs = new WeakMap<KvEntry, KvEntryOut>();

/** The entry's output, made once per stored entry (entries are replaced on write, never changed). */
function keptKvOut(e: KvEntry): KvEntryOut {
  let out = outputs.get(e);
  if (out === undefined) {
    out = Object.freeze(kvEntryOut(e)) as KvEntryOut;
    outputs.set(e, out);
  }
  return out;
}

interface Built {
  keys: string[];
  outs: KvEntryOut[];
  /** The newest entry or tombstone index under the prefix (0: none). */
  max: number;
}

type Part = ReturnType<KvTable['listPart']>;

/**
 * The prefix's keys and outputs in key order, a part of KEPT_MIN_ENTRIES keys at a time from
 * `first`. A key written between two parts is seen in its newer state or not at all, depending on
 * where it falls: the journal names it, and the listing follows it after the build.
 */
function* walkInSteps(table: KvTable, prefix: string, first: Part): BuildSteps<Built> {
  const keys: string[] = [];
  const outs: KvEntryOut[] = [];
  let max = 0;
  for (let part = first; ; part = table.listPart(prefix, part.last, KEPT_MIN_ENTRIES)) {
    for (let k = 0; k < part.entries.length; k++) {
      keys.push(part.entries[k].Key);
      outs.push(keptKvOut(part.entries[k]));
      if (k % ROWS_PER_YIELD === ROWS_PER_YIELD - 1) yield;
    }
    max = Math.max(max, part.max);
    if (part.last === undefined) return { keys, outs, max };
    yield;
  }
}

class KvListing {
  private keys: string[] = [];
  private outs: KvEntryOut[] = [];
  /** The newest entry or tombstone index under the prefix (0: none). */
  private max = 0;
  private version = -1;
  /** A walk of the prefix while it runs in steps; `version`: the table's when it started. */
  private build: { steps: SlicedBuild<Built>; version: number } | undefined;

  constructor(
    private readonly table: KvTable,
    private readonly prefix: string,
    first: Part,
    version: number,
    /** The store's builds in steps (its lane; which reads wait). */
    private readonly builds: ListingBuilds,
  ) {
    this.startBuild(first, version);
  }

  get size(): number {
    return this.outs.length;
  }

  /** Whether a walk of the prefix is under way (the listing then holds no answer of its own yet: keep it). */
  get building(): boolean {
    return this.build !== undefined;
  }

  /**
   * The prefix's outputs in key order and its newest index. Do not modify. To a read that waits for
   * builds (ListingBuilds.tryRead) while a walk of the prefix runs in steps: what is kept now, a
   * stand-in that read drops.
   */
  update(): { outs: readonly KvEntryOut[]; max: number } {
    for (;;) {
      if (this.build !== undefined && !this.install(this.build)) return { outs: this.outs, max: this.max };
      const changes = this.table.keyChangesSince(this.version);
      const changed = changes.keys === null ? null : new Set(changes.keys);
      if (changed !== null && changed.size <= MAX_FOLLOWED) {
        for (const key of changed) if (key.startsWith(this.prefix)) this.follow(key);
        this.version = changes.version;
        return { outs: this.outs, max: this.max };
      }
      // Walked again, then (next turn of this loop) the changes made during the walk followed.
      this.startBuild(this.table.listPart(this.prefix, undefined, KEPT_MIN_ENTRIES), changes.version);
    }
  }

  private startBuild(first: Part, version: number): void {
    const steps = new SlicedBuild(walkInSteps(this.table, this.prefix, first), this.builds);
    if (first.last === undefined) steps.finish();
    this.build = { steps, version };
  }

  /** Keeps what `build` walked; false when the reader waits for it instead. */
  private install(build: { steps: SlicedBuild<Built>; version: number }): boolean {
    const built = resultOf(build.steps, () => (this.build = undefined));
    if (built === undefined) return false;
    this.keys = built.keys;
    this.outs = built.outs;
    this.max = built.max;
    this.version = build.version;
    this.build = undefined;
    return true;
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

/** Large prefixes kept on the table (KvTable.listings), by prefix, the least recently read first. */
const PREFIX_LISTINGS = new ListingKey<Map<string, KvListing>>('kv prefixes');

/**
 * A ?recurse read of `prefix`: the outputs of its entries in key order (shared and frozen; do not
 * modify) and its index (the newest entry or tombstone under the prefix; the table index for the
 * empty prefix or when nothing was ever under it, as Consul's kvsListTxn). A large prefix's listing
 * is kept on the table (PREFIX_LISTINGS); to a read that waits for builds, a stand-in while
 * it is walked in steps (KvListing.update).
 */
export function kvRecurse(table: KvTable, builds: ListingBuilds, prefix: string): { outs: KvEntryOut[]; index: number } {
  const kept = table.listings.of(PREFIX_LISTINGS, () => new Map());
  const indexOf = (max: number) => (prefix === '' || max === 0 ? table.tableIndex : max);
  let listing = kept.get(prefix);
  if (listing) {
    // Most recently read last: Map order is insertion order.
    kept.delete(prefix);
    kept.set(prefix, listing);
  } else {
    const version = table.keyChangesSince(-1).version;
    // The first part tells a small prefix (answered from it, not kept) from a large one.
    const first = table.listPart(prefix, undefined, KEPT_MIN_ENTRIES);
    if (first.last === undefined && first.entries.length < KEPT_MIN_ENTRIES) return { outs: first.entries.map(keptKvOut), index: indexOf(first.max) };
    kept.set(prefix, (listing = new KvListing(table, prefix, first, version, builds)));
    if (kept.size > MAX_KEPT) kept.delete(kept.keys().next().value as string);
  }
  const { outs, max } = listing.update();
  if (listing.size < KEPT_MIN_ENTRIES && !listing.building) kept.delete(prefix);
  return { outs: outs.slice(), index: indexOf(max) };
}
