// The KV table (Consul's "kvs" and "tombstones" tables): entries in key order for prefix reads,
// tombstones of deleted keys so a prefix read's index never moves backwards when its newest entry
// is deleted, the keys each session holds, and the lock-delays of keys whose holder was invalidated.
// The mutators assume the caller validated the command: they never refuse.
import { Fields, keyedStream, runSync } from '../snapshot-stream';
import type { Txn } from '../txn';
import { KVS, kvWriteWatchKeys } from './kv-keys';
import { kvEntry, type KvEntry, type KvEntryData } from './kv-records';
import { KeptListings } from '../kept-listings';
import { ValueArenas, type ArenaKind } from './value-arenas';
import { ShardedMap } from '../sharded-map';

/**
 * What the table holds for a key: its entry, or the Raft index at which it was deleted (its
 * tombstone). Never changed once stored: a write stores a new one (a snapshot may hold the old). A
 * tombstone as a bare number, not an object around either: a slot object per key was one more heap
 * object per entry for every mark-compact to visit (issue #34; a gigabyte of 4 KiB values is 262,144 keys).
 */
type Slot = KvEntry | number;

/** The entry in `slot`, if it holds one. */
function entryIn(slot: Slot | undefined): KvEntry | undefined {
  return typeof slot === 'object' ? slot : undefined;
}

/** What a prefix read's index counts for a slot: its entry's ModifyIndex or its tombstone (0: no slot). */
function slotIndex(slot: Slot | undefined): number {
  return slot === undefined ? 0 : typeof slot === 'number' ? slot : slot.ModifyIndex;
}

export interface KvTableDump {
  entries: KvEntry[];
  tombstones: [string, number][];
  tableIndex: number;
}

/** Key changes remembered for keyChangesSince; a listing further behind walks its prefix again. */
const KEY_JOURNAL_MAX = 4096;

export class KvTable {
  /** What reads keep beside this table between reads: large ?recurse prefixes (kv-listing.ts, kept-listings.ts). */
  readonly listings = new KeptListings();
  /** Every key with an entry or a tombstone, in ascending order. */
  private readonly sorted: string[] = [];
  /** Sharded: a gigabyte of keys in one Map stalled the loop for each of its growths (sharded-map.ts). */
  private readonly slots = new ShardedMap<string, Slot>();
  /** session ID → keys it holds */
  private readonly held = new Map<string, Set<string>>();
  /** key → wall-clock ms until which a lock on it may not be acquired (per server, never replicated). */
  private readonly lockDelays = new Map<string, number>();
  private index = 0;
  private live = 0;
  /**
   * Keys written or deleted lately, so that a large prefix listing kept beside the table
   * (kv-listing.ts) can follow the few changes since it last looked instead of walking every key
   * under its prefix (issue #16). Entry i is the key changed at version journalBase+i+1.
   */
  private keyVersion = 0;
  private journalBase = 0;
  private keyJournal: string[] = [];
  /**
   * One per open snapshot (capture()): key → its slot when the snapshot was taken (undefined: none),
   * recorded before the first write to the key after it.
   */
  private readonly preImages = new Set<Map<string, Slot | undefined>>();
  /** The arenas values are kept in: a restore's and those written values are copied into (value-arenas.ts). */
  private readonly arenas: ValueArenas;

  constructor(arenas: ValueArenas = new ValueArenas()) {
    this.arenas = arenas;
  }

  // ---- reads ----

  get(key: string): KvEntry | undefined {
    return entryIn(this.slots.get(key));
  }

  get size(): number {
    return this.live;
  }

  /** The highest index of any KV write or delete (Consul: max of the kvs and tombstones tables). */
  get tableIndex(): number {
    return this.index;
  }

  /** Entries whose key starts with `prefix`, in key order. */
  list(prefix: string): KvEntry[] {
    const out: KvEntry[] = [];
    this.scan(prefix, (slot) => {
      if (typeof slot === 'object') out.push(slot);
    });
    return out;
  }

  /**
   * list(prefix) and prefixIndex(prefix) in one walk of the keys (a ?recurse read needs both; at
   * 100,000 keys each walk costs tens of ms of event loop — issue #16).
   */
  listWithIndex(prefix: string): { entries: KvEntry[]; index: number } {
    const entries: KvEntry[] = [];
    let max = 0;
    this.scan(prefix, (slot) => {
      if (typeof slot === 'object') entries.push(slot);
      const i = slotIndex(slot);
      if (i > max) max = i;
    });
    return { entries, index: prefix === '' || max === 0 ? this.index : max };
  }

  /**
   * A prefix read in parts (kv-listing.ts builds a large one in steps, issue #16): up to `limit`
   * keys under `prefix` that sort after `after` (from the first when undefined) — their entries,
   * the newest entry or tombstone index among them (0: none) and, when more keys may follow, the
   * last key looked at (the next part's `after`; a key, not a position, as writes between two
   * parts move positions).
   */
  listPart(prefix: string, after: string | undefined, limit: number): { entries: KvEntry[]; max: number; last: string | undefined } {
    const entries: KvEntry[] = [];
    let max = 0;
    let at = this.lowerBound(after ?? prefix);
    if (after !== undefined && this.sorted[at] === after) at++;
    for (let seen = 0; at < this.sorted.length; at++, seen++) {
      const key = this.sorted[at];
      if (!key.startsWith(prefix)) return { entries, max, last: undefined };
      if (seen === limit) return { entries, max, last: this.sorted[at - 1] };
      const slot = this.slots.get(key) as Slot;
      if (typeof slot === 'object') entries.push(slot);
      const i = slotIndex(slot);
      if (i > max) max = i;
    }
    return { entries, max, last: undefined };
  }

  /**
   * The index of a prefix read: the newest entry or tombstone under the prefix; the table index for
   * the empty prefix or when nothing was ever under it (Consul's kvsListTxn).
   */
  prefixIndex(prefix: string): number {
    if (prefix === '') return this.index;
    let max = 0;
    this.scan(prefix, (slot) => {
      const i = slotIndex(slot);
      if (i > max) max = i;
    });
    return max === 0 ? this.index : max;
  }

  /**
   * Keys written or deleted since `version` (a value this method returned before), or null when
   * that is too long ago to tell — then every key must be looked at.
   */
  keyChangesSince(version: number): { version: number; keys: readonly string[] | null } {
    if (version === this.keyVersion) return { version, keys: [] };
    if (version < this.journalBase || version > this.keyVersion) return { version: this.keyVersion, keys: null };
    return { version: this.keyVersion, keys: this.keyJournal.slice(version - this.journalBase) };
  }

  /** What a prefix read's index counts for `key`: its entry's ModifyIndex, its tombstone, or 0. */
  keyIndex(key: string): number {
    return slotIndex(this.slots.get(key));
  }

  /** Keys held by a session, in key order. */
  heldBy(session: string): string[] {
    return [...(this.held.get(session) ?? [])].sort();
  }

  /** Until when (wall-clock ms) a lock on `key` may not be acquired; 0 when there is no delay. */
  lockDelayUntil(key: string): number {
    return this.lockDelays.get(key) ?? 0;
  }

  // ---- writes ----

  /** Insert or replace an entry (the caller computed every field but the indexes). */
  put(data: KvEntryData, txn: Txn): KvEntry {
    const slot = this.slots.get(data.Key);
    const existing = entryIn(slot);
    // A new value stays a view into its Raft entry's bytes when those are in an arena (the log's
    // entry bytes are: raft's entry-bytes.ts), else it is copied into the write arena; one the key
    // already holds (a lock released) stays where it is (value-arenas.ts).
    const v = data.Value;
    const value = v === null || v === existing?.Value ? v : (this.arenas.adopt(data.Key, v) ?? this.arenas.store(data.Key, v));
    const entry = kvEntry(data, existing?.CreateIndex ?? txn.index, txn.index, value);
    if (slot === undefined) this.insertKey(data.Key);
    this.keepPreImage(data.Key, slot);
    this.slots.set(data.Key, entry);
    if (!existing) this.live++;
    else if (existing.Value !== entry.Value) this.arenas.released(existing.Value);
    if (existing?.Session && existing.Session !== entry.Session) this.unhold(existing.Session, entry.Key);
    if (entry.Session) {
      let keys = this.held.get(entry.Session);
      if (!keys) this.held.set(entry.Session, (keys = new Set()));
      keys.add(entry.Key);
    }
    this.touched(entry.Key, txn);
    return entry;
  }

  /** Delete one key, leaving a tombstone; a missing key changes nothing. */
  delete(key: string, txn: Txn): boolean {
    const slot = this.slots.get(key);
    const existing = entryIn(slot);
    if (!existing) return false;
    this.keepPreImage(key, slot);
    this.slots.set(key, txn.index);
    this.live--;
    this.arenas.released(existing.Value);
    if (existing.Session) this.unhold(existing.Session, key);
    this.touched(key, txn);
    return true;
  }

  /** Delete every key under `prefix`. */
  deleteTree(prefix: string, txn: Txn): number {
    const keys: string[] = [];
    this.scan(prefix, (slot, key) => {
      if (typeof slot === 'object') keys.push(key);
    });
    for (const k of keys) this.delete(k, txn);
    return keys.length;
  }

  setLockDelay(key: string, untilMs: number): void {
    if (untilMs > this.lockDelayUntil(key)) this.lockDelays.set(key, untilMs);
  }

  /** Forget lock-delays that ended before `nowMs` (keeps the map from growing). */
  expireLockDelays(nowMs: number): void {
    for (const [k, until] of this.lockDelays) if (until <= nowMs) this.lockDelays.delete(k);
  }

  /** `onDue` runs when an arena holds too little and evacuateArenas() has work (value-arenas.ts). */
  tendArenas(onDue: () => void): void {
    this.arenas.onDue = onDue;
  }

  /**
   * Copies values still in due arenas into the write arena, up to about `maxBytes` of them; true
   * while more is due (value-arenas.ts). The store runs it in steps between other work.
   */
  evacuateArenas(maxBytes: number): boolean {
    return this.arenas.evacuate(maxBytes, (key) => entryIn(this.slots.get(key)));
  }

  /** What of its arenas of one kind this table still holds (value-arenas.ts). */
  arenasHeld(kind: ArenaKind = 'restored'): { arenas: number; bytes: number; liveBytes: number } {
    return this.arenas.held(kind);
  }

  // ---- snapshot ----

  dump(): KvTableDump {
    const entries: KvEntry[] = [];
    const tombstones: [string, number][] = [];
    for (const key of this.sorted) {
      const slot = this.slots.get(key) as Slot;
      if (typeof slot === 'object') entries.push(slot);
      else tombstones.push([key, slot]);
    }
    return { entries, tombstones, tableIndex: this.index };
  }

  /**
   * dump() as of now, for a snapshot that serialises it later while writes go on: the key list (keys
   * are never removed, so it is the list as of now), and until `release` a pre-image of every slot
   * written meanwhile (slots are replaced, never changed).
   */
  capture(): { value: Fields; release: () => void } {
    const keys = this.sorted.slice();
    const preImages = new Map<string, Slot | undefined>();
    this.preImages.add(preImages);
    const slots = this.slots;
    const slotOf = (key: string) => (preImages.has(key) ? preImages.get(key) : slots.get(key));
    return {
      value: new Fields([
        [
          'entries',
          // Every key has an entry or a tombstone: `live` of them entries.
          keyedStream(this.live, keys, (out, key) => {
            const entry = entryIn(slotOf(key));
            if (entry) out.item(entry);
            return entry !== undefined;
          }),
        ],
        [
          'tombstones',
          keyedStream(keys.length - this.live, keys, (out, key) => {
            const slot = slotOf(key);
            const tombstone = typeof slot === 'number' ? slot : undefined;
            if (tombstone !== undefined) out.pair(key, tombstone);
            return tombstone !== undefined;
          }),
        ],
        ['tableIndex', this.index],
      ]),
      release: () => this.preImages.delete(preImages),
    };
  }

  static load(dump: KvTableDump | undefined): KvTable {
    return runSync(KvTable.loadSteps(dump));
  }

  /**
   * load() a step of about `step` keys at a time (a restore rebuilds the table beside other work).
   * A dump lists its entries and its tombstones each in key order (capture() walks the sorted key
   * list), so the key list is their merge, in steps; a dump that is not so ordered is sorted whole.
   */
  static *loadSteps(dump: KvTableDump | undefined, step = 1024, arenas?: ValueArenas): Generator<void, KvTable, void> {
    const t = new KvTable(arenas);
    if (!dump) return t;
    let done = 0;
    for (const e of dump.entries) {
      const v = e.Value;
      const value = v === null || v === undefined ? null : (arenas?.adopt(e.Key, v) ?? ownValue(v));
      const entry = kvEntry(e, e.CreateIndex, e.ModifyIndex, value);
      t.slots.set(e.Key, entry);
      t.live++;
      if (entry.Session) {
        let keys = t.held.get(entry.Session);
        if (!keys) t.held.set(entry.Session, (keys = new Set()));
        keys.add(entry.Key);
      }
      if (++done % step === 0) yield;
    }
    for (const [k, i] of dump.tombstones) {
      t.slots.set(k, i);
      if (++done % step === 0) yield;
    }
    const a = dump.entries;
    const b = dump.tombstones;
    let i = 0;
    let j = 0;
    let ordered = true;
    while (i < a.length || j < b.length) {
      const key = j >= b.length || (i < a.length && compareKeys(a[i].Key, b[j][0]) < 0) ? a[i++].Key : b[j++][0];
      const last = t.sorted.length > 0 ? t.sorted[t.sorted.length - 1] : undefined;
      if (last !== undefined && compareKeys(last, key) >= 0) {
        ordered = false;
        break;
      }
      t.sorted.push(key);
      if (++done % step === 0) yield;
    }
    if (!ordered || t.sorted.length !== t.slots.size) {
      t.sorted.length = 0;
      for (const key of [...t.slots.keys()].sort(compareKeys)) t.sorted.push(key);
    }
    t.index = dump.tableIndex;
    t.arenas.settle();
    return t;
  }

  /** Broken invariants ([] when consistent). */
  invariants(): string[] {
    const problems: string[] = [];
    for (let i = 1; i < this.sorted.length; i++) {
      if (compareKeys(this.sorted[i - 1], this.sorted[i]) >= 0) problems.push(`kv keys out of order at ${this.sorted[i]}`);
    }
    if (this.sorted.length !== this.slots.size) problems.push(`kv key list has ${this.sorted.length} keys, slots ${this.slots.size}`);
    let live = 0;
    for (const [key, slot] of this.slots) {
      if (typeof slot === 'object') {
        live++;
        if (slot.Key !== key) problems.push(`kv entry ${slot.Key} filed under ${key}`);
        if (slot.ModifyIndex > this.index) problems.push(`kv entry ${key} is newer than the table index`);
        if (slot.Session && !this.held.get(slot.Session)?.has(key)) problems.push(`kv entry ${key} not indexed to its session`);
      } else if (!Number.isInteger(slot)) problems.push(`kv slot ${key} holds neither an entry nor a tombstone index`);
    }
    if (live !== this.live) problems.push(`kv live count ${this.live}, entries ${live}`);
    for (const [session, keys] of this.held) {
      for (const k of keys) if (this.get(k)?.Session !== session) problems.push(`kv session index: ${k} is not held by ${session}`);
    }
    return problems;
  }

  // ---- internals ----

  private keepPreImage(key: string, slot: Slot | undefined): void {
    for (const preImages of this.preImages) if (!preImages.has(key)) preImages.set(key, slot);
  }

  private touched(key: string, txn: Txn): void {
    this.index = txn.index;
    this.keyVersion++;
    if (this.keyJournal.length < KEY_JOURNAL_MAX) {
      this.keyJournal.push(key);
    } else {
      // Nobody read it for a long while: start afresh (a reader older than this walks its keys).
      this.keyJournal = [];
      this.journalBase = this.keyVersion;
    }
    txn.bump(KVS, ...kvWriteWatchKeys(key));
  }

  private unhold(session: string, key: string): void {
    const keys = this.held.get(session);
    if (!keys) return;
    keys.delete(key);
    if (keys.size === 0) this.held.delete(session);
  }

  private scan(prefix: string, visit: (slot: Slot, key: string) => void): void {
    for (let i = this.lowerBound(prefix); i < this.sorted.length; i++) {
      const key = this.sorted[i];
      if (!key.startsWith(prefix)) break;
      visit(this.slots.get(key) as Slot, key);
    }
  }

  /** First position whose key is ≥ `key`. */
  private lowerBound(key: string): number {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.sorted[mid] < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private insertKey(key: string): void {
    const at = this.lowerBound(key);
    if (this.sorted[at] !== key) this.sorted.splice(at, 0, key);
  }
}

function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A restored value as the table keeps it, when it is not in a restore arena (value-arenas.ts):
 * adopted when it owns its memory (the snapshot decoder copies each value out of the snapshot's bytes
 * but in arenas: snapshot-decode.ts), copied when it is a view into something larger (it would keep
 * that alive). Copying every value again doubled a restore's memory at a state of 4 KiB values
 * (issue #34).
 */
function ownValue(v: Uint8Array): Uint8Array {
  return v.byteOffset === 0 && v.byteLength === v.buffer.byteLength ? v : new Uint8Array(v);
}
