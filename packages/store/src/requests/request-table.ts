// The requests this state machine has applied, with their results: the dedup window that makes a
// write applied at most once however often it is re-sent (Raft thesis §6.3, "Implementing
// linearizable semantics"). A forwarding server re-sends a write under the same request id when
// it cannot know whether its first attempt reached a leader's log; if both copies commit, the
// second finds the first here and answers its result instead of applying again.
//
// The window is part of the replicated state (snapshotted and restored with the tables) and is
// evicted deterministically: by the proposer's timestamp carried in the entry, never by this
// server's clock, so every server keeps the same window.
import { CommandError } from '../command-error';
import { EncodedValue, packPlain, unpackPlain } from '../msgpack-writer';
import { Fields, Lazy, runSync, SteppedLazy, Stream, type StreamOut } from '../snapshot-stream';
import { OTHER_LANE, ProposerLanes, type FrozenIds } from './proposer-lanes';
import { SlotIndex } from './slot-index';

/** The identity of a write, stamped on its Raft entry by the leader that proposed it. */
export interface RequestStamp {
  /** Unique per write, fixed where the write entered the cluster and kept across every retry. */
  id: string;
  /**
   * The log's time (ms) when the entry was proposed: the proposing leader continues the latest stamp
   * in its log by its own monotonic clock (server rpc/log-clock.ts). Read from the entry, it ages the
   * window out identically on every server. (Versions before that stamped the leader's wall clock;
   * such stamps load and age as they did, and the log's time continues from the latest of them.)
   */
  at: number;
  /**
   * Set on every copy after the first (a re-send). Only such a copy can find its request applied
   * already: if two copies of a request both commit, the first one proposed is the earlier in the
   * log (it was proposed by the same or an older leader, and a log's terms never go down), so a
   * first copy never needs a window lookup — it is only recorded.
   */
  resent?: boolean;
}

/**
 * Bounds of the window. A retry is only ever sent within the entering server's write budget (7 s)
 * and an entry can only commit while a leader that holds it is in office, so two minutes leaves a
 * wide margin; the count bound caps memory (~100 B per entry) at sustained 800 writes/s for the
 * whole age bound and still covers 100,000 writes — over 10 s of the fastest measured rate.
 */
export const REQUEST_WINDOW = { maxAgeMs: 120_000, maxEntries: 100_000 } as const;

/** A result as kept in a snapshot: a value, or the message of the CommandError it was refused with. */
type Outcome = { value: unknown } | { refused: string };

const outcomeOf = (result: unknown): Outcome => (result instanceof CommandError ? { refused: result.message } : { value: result });
const resultOf = (outcome: Outcome): unknown => ('refused' in outcome ? new CommandError(outcome.refused) : outcome.value);

/**
 * A result as the window keeps it. Most are `true` or a refusal; an object (a transaction's rows: a
 * /v1/txn of 63 catalog ops answers ~11 KB of them) is kept as its msgpack bytes, the very bytes a
 * snapshot writes for it. Kept live, the results of a catalog loaded by /v1/txn were ~90 MB of small
 * objects at 100,000 nodes (bench/catalog-scale/store-heap.js), traced by every full collection for
 * the two minutes they stay in the window, though only a re-sent write ever reads one.
 */
function keptOf(result: unknown): unknown {
  return typeof result === 'object' && result !== null && !(result instanceof CommandError) ? new EncodedValue(packPlain(result)) : result;
}

/** The result a kept one stands for: decoded as a restored window would hold it. */
function resultFrom(kept: unknown): unknown {
  return kept instanceof EncodedValue ? unpackPlain(kept.bytes) : kept;
}

/**
 * The window as a snapshot holds it, column by column, in apply order: the ids joined by newlines,
 * the Raft indexes and stamps as little-endian float64s, and the outcomes run-length encoded (most
 * writes answer `true`). Written this way a full window (100,000 requests) is four values for the
 * encoder instead of half a million, and snapshots under a heavy write load — which carry the whole
 * window every time — stay cheap.
 */
export interface RequestColumns {
  ids: string;
  index: Uint8Array;
  at: Uint8Array;
  /** [run length, outcome] pairs. */
  outcomes: [number, Outcome][];
}

/** The columnar form, or (snapshots written before it) one [id, index, at, outcome] row per request. */
export type RequestTableDump = RequestColumns | [id: string, index: number, at: number, outcome: Outcome][];

/** Ids never hold the separator (rpc request-ids.ts makes them from base64url and base36 digits). */
const SEPARATOR = '\n';

/** The ring's first size; it doubles as needed, up to the count bound. */
const FIRST_CAPACITY = 1024;

/** Whether this machine stores doubles little-endian (the snapshot columns' byte order). */
const LITTLE_ENDIAN = new Uint8Array(new Float64Array([1]).buffer)[7] === 0x3f;

export class RequestTable {
  /**
   * The window as a ring of columns in apply order, oldest at `head`: each request's proposer lane
   * and sequence (its id as two numbers: proposer-lanes.ts), Raft index, stamp and result. Typed
   * arrays hold no pointers, so a full window (100,000 requests on every server) is nothing for the
   * garbage collector to trace, and recording a request allocates nothing (but the bytes of an object
   * result: keptOf()).
   */
  private capacity: number;
  private lanes: Uint32Array;
  private seqs: Float64Array;
  private indexes: Float64Array;
  private ats: Float64Array;
  private results: unknown[];
  private head = 0;
  private count = 0;
  /** The latest stamp applied: where the next leader's log clock continues from. */
  private latest = 0;
  /**
   * This process's monotonic time when `latest` was applied (not replicated). Taken here, at the
   * apply, not when someone next asks: asked lazily, a server that applied the last stamp before a
   * partition and was asked only after it healed told the stamp's own time, the log's time stood
   * still in between, and a copy held that long in a cut link looked fresh (multi-host-partitions).
   */
  private latestAppliedAt = 0;
  private readonly ids = new ProposerLanes();
  private readonly slots: SlotIndex;

  /** `expected`: requests about to be loaded (a restore), so the ring is sized once. */
  constructor(expected = 0) {
    let capacity = FIRST_CAPACITY;
    while (capacity < expected) capacity *= 2;
    this.capacity = capacity;
    this.lanes = new Uint32Array(capacity);
    this.seqs = new Float64Array(capacity);
    this.indexes = new Float64Array(capacity);
    this.ats = new Float64Array(capacity);
    this.results = new Array<unknown>(capacity).fill(undefined);
    this.slots = new SlotIndex(capacity);
  }

  /** The request as first applied (its `result`), or undefined when it is not in the window. */
  get(id: string): { result: unknown } | undefined {
    const seq = this.ids.find(id);
    if (seq < 0) return undefined;
    const slot = this.slots.find(this.ids.lane, seq);
    return slot < 0 ? undefined : { result: resultFrom(this.results[slot]) };
  }

  /** Remember that `stamp` was applied at `index` with `result`, then age the window. */
  record(stamp: RequestStamp, index: number, result: unknown): void {
    // Deterministic on every server (the same entry), and never true of ids this cluster makes.
    if (stamp.id.includes(SEPARATOR)) return;
    this.push(stamp.id, index, stamp.at, keptOf(result));
    this.evict(stamp.at);
  }

  get size(): number {
    return this.count;
  }

  /** The latest stamp among the requests recorded (0 when none): the log's time as applied here. */
  get latestStamp(): number {
    return this.latest;
  }

  /** The log's time now as this server can tell it: the latest stamp advanced by the time since it was applied (0: none). */
  logTimeNow(): number {
    return this.latest === 0 ? 0 : this.latest + (performance.now() - this.latestAppliedAt);
  }

  private push(id: string, index: number, at: number, result: unknown): void {
    if (at > this.latest) {
      this.latest = at;
      this.latestAppliedAt = performance.now();
    }
    const seq = this.ids.intern(id);
    const lane = this.ids.lane;
    if (this.count === this.capacity) this.grow();
    const slot = (this.head + this.count) & (this.capacity - 1);
    this.lanes[slot] = lane;
    this.seqs[slot] = seq;
    this.indexes[slot] = index;
    this.ats[slot] = at;
    this.results[slot] = result;
    const older = this.slots.find(lane, seq);
    this.count++;
    if (older < 0) {
      this.slots.add(lane, seq, slot);
      this.ids.added(lane);
    } else {
      // A first copy is recorded without a lookup (store.ts). Were the id in the window already — a
      // copy not marked as a re-send, which rpc.ts never proposes — keep only the newest record,
      // so the window stays one record per id (same lane and sequence: its bookkeeping stands).
      this.dropSlot(older);
    }
  }

  private evict(now: number): void {
    const oldest = now - REQUEST_WINDOW.maxAgeMs;
    const mask = this.capacity - 1;
    while (this.count > 0 && (this.count > REQUEST_WINDOW.maxEntries || this.ats[this.head] < oldest)) {
      const slot = this.head;
      this.slots.remove(this.lanes[slot], this.seqs[slot], slot);
      this.ids.removed(this.lanes[slot], this.seqs[slot]);
      this.results[slot] = undefined;
      this.head = (slot + 1) & mask;
      this.count--;
    }
  }

  /** The rare path of push(): takes `slot` out, later requests move up one (a pass over the window). */
  private dropSlot(slot: number): void {
    const mask = this.capacity - 1;
    for (let at = (slot - this.head) & mask; at < this.count - 1; at++) {
      const to = (this.head + at) & mask;
      const from = (to + 1) & mask;
      this.lanes[to] = this.lanes[from];
      this.seqs[to] = this.seqs[from];
      this.indexes[to] = this.indexes[from];
      this.ats[to] = this.ats[from];
      this.results[to] = this.results[from];
    }
    this.count--;
    this.results[(this.head + this.count) & mask] = undefined;
    this.reindex();
  }

  /** Doubles the ring, oldest request first in slot 0. */
  private grow(): void {
    const order = this.inOrder();
    this.capacity *= 2;
    this.lanes = grown(new Uint32Array(this.capacity), order.lanes);
    this.seqs = grown(new Float64Array(this.capacity), order.seqs);
    this.indexes = grown(new Float64Array(this.capacity), order.indexes);
    this.ats = grown(new Float64Array(this.capacity), order.ats);
    this.results = order.results.concat(new Array<unknown>(this.capacity - order.results.length).fill(undefined));
    this.head = 0;
    this.reindex();
  }

  private reindex(): void {
    this.slots.reset(this.capacity);
    const mask = this.capacity - 1;
    for (let at = 0; at < this.count; at++) {
      const slot = (this.head + at) & mask;
      this.slots.add(this.lanes[slot], this.seqs[slot], slot);
    }
  }

  /** Copies of the columns in apply order (a few memory copies). */
  private inOrder(): { lanes: Uint32Array; seqs: Float64Array; indexes: Float64Array; ats: Float64Array; results: unknown[] } {
    const from = this.head;
    const to = from + this.count;
    const wraps = to > this.capacity;
    const part = <T extends Uint32Array | Float64Array>(column: T, empty: T): T => {
      if (!wraps) return column.slice(from, to) as T;
      empty.set(column.subarray(from), 0);
      empty.set(column.subarray(0, to - this.capacity), this.capacity - from);
      return empty;
    };
    return {
      lanes: part(this.lanes, new Uint32Array(this.count)),
      seqs: part(this.seqs, new Float64Array(this.count)),
      indexes: part(this.indexes, new Float64Array(this.count)),
      ats: part(this.ats, new Float64Array(this.count)),
      results: wraps ? this.results.slice(from).concat(this.results.slice(0, to - this.capacity)) : this.results.slice(from, to),
    };
  }

  dump(): RequestColumns {
    const order = this.inOrder();
    return columnsOf(idsOf(order.lanes, order.seqs, this.ids.frozen()), order.indexes, order.ats, order.results.map(resultFrom));
  }

  /** dump() as of now, serialised later (the columns are copied now: a few memory copies). */
  capture(): Fields {
    const order = this.inOrder();
    const idOf = this.ids.frozen();
    // The id and number columns become one value each when their turn comes (a single pass over
    // flat data). The outcomes are streamed a run at a time: a window of /v1/txn results holds
    // hundreds of thousands of result objects, and encoding them as one value blocked the event
    // loop for seconds at 100,000 catalog nodes (bench/catalog-scale, snapshot phase).
    let runs: [number, Outcome][] | null = null;
    const runsNow = () => (runs ??= runsOf(order.results));
    return new Fields([
      ['ids', new SteppedLazy(() => idsOfSteps(order.lanes, order.seqs, idOf))],
      ['index', new Lazy(() => float64s(order.indexes))],
      ['at', new Lazy(() => float64s(order.ats))],
      ['outcomes', new Stream(() => runsNow().length, (out, step) => outcomeSteps(runsNow(), out, step))],
    ]);
  }

  static load(dump: RequestTableDump | undefined): RequestTable {
    return runSync(RequestTable.loadSteps(dump));
  }

  /**
   * load() a step of about `step` requests at a time (a restore rebuilds the window beside other
   * work). An id outside the proposers' lanes costs two ShardedMap sets, which late in a 1 GiB
   * restore on a slow VM took ~20 µs each: a step of 2,048 held the event loop for 41 ms.
   */
  static *loadSteps(dump: RequestTableDump | undefined, step = 512): Generator<void, RequestTable, void> {
    if (!dump) return new RequestTable();
    if (Array.isArray(dump)) {
      const rows = new RequestTable(dump.length);
      for (const [id, index, at, outcome] of dump) rows.push(id, index, at, keptOf(resultOf(outcome)));
      return rows;
    }
    const ids = yield* splitSteps(dump.ids, step);
    const indexes = fromFloat64s(dump.index);
    const ats = fromFloat64s(dump.at);
    if (indexes.length !== ids.length || ats.length !== ids.length) throw new Error('request window columns of different lengths');
    yield;
    const table = new RequestTable(ids.length);
    yield;
    let i = 0;
    for (const [run, outcome] of dump.outcomes) {
      const result = keptOf(resultOf(outcome));
      for (let k = 0; k < run; k++, i++) {
        table.push(ids[i], indexes[i], ats[i], result);
        if ((i + 1) % step === 0) yield;
      }
    }
    if (i !== ids.length) throw new Error('request window outcomes do not cover its ids');
    return table;
  }

  invariants(lastIndex: number): string[] {
    const problems: string[] = [];
    const counted = new Map<number, number>();
    let prev = 0;
    for (let at = 0; at < this.count; at++) {
      const slot = (this.head + at) & (this.capacity - 1);
      const lane = this.lanes[slot];
      const id = this.ids.idOf(lane, this.seqs[slot]);
      counted.set(lane, (counted.get(lane) ?? 0) + 1);
      if (this.slots.find(lane, this.seqs[slot]) !== slot) problems.push(`request ${id} is not where the window's index says`);
      if (this.ids.find(id) !== this.seqs[slot] || this.ids.lane !== lane) problems.push(`request ${id} does not find itself by its id`);
      if (this.indexes[slot] <= prev) problems.push(`request ${id} recorded out of apply order`);
      if (this.indexes[slot] > lastIndex) problems.push(`request ${id} recorded after the last applied index`);
      prev = this.indexes[slot];
    }
    if (this.slots.count() !== this.count) problems.push('the window\'s index and columns hold different requests');
    problems.push(...this.ids.invariants(counted));
    return problems;
  }
}

function grown<T extends Uint32Array | Float64Array>(into: T, from: T): T {
  into.set(from, 0);
  return into;
}

/** The ids column: the ids joined by newlines. */
function idsOf(lanes: Uint32Array, seqs: Float64Array, ids: FrozenIds): string {
  return runSync(idsOfSteps(lanes, seqs, ids));
}

/** Ids per step of the ids column, either way (a few ms under load for the ASCII case). */
const IDS_PER_STEP = 8192;

/** idsOf() a step at a time: a full window's ids in one pass held a busy server's loop 50–75 ms (issue #34). */
function* idsOfSteps(lanes: Uint32Array, seqs: Float64Array, ids: FrozenIds): Generator<void, string, void> {
  const ascii = yield* asciiIdsOf(lanes, seqs, ids);
  if (ascii !== undefined) return ascii;
  const out = new Array<string>(lanes.length);
  for (let i = 0; i < lanes.length; i++) {
    out[i] = ids.idOf(lanes[i], seqs[i]);
    if ((i + 1) % IDS_PER_STEP === 0) yield;
  }
  return out.join(SEPARATOR);
}

/** `joined.split(SEPARATOR)` (none for ''), a step of about `step` ids at a time. */
function* splitSteps(joined: string, step: number): Generator<void, string[], void> {
  const out: string[] = [];
  if (joined === '') return out;
  for (let from = 0; ; ) {
    const end = joined.indexOf(SEPARATOR, from);
    out.push(end < 0 ? joined.slice(from) : joined.slice(from, end));
    if (end < 0) return out;
    from = end + SEPARATOR.length;
    if (out.length % step === 0) yield;
  }
}

const BASE36 = Uint8Array.from('0123456789abcdefghijklmnopqrstuvwxyz', (c) => c.charCodeAt(0));

/**
 * The usual case of idsOf(), written as bytes into one buffer and read back as one string: every id
 * of an ASCII proposer prefix (a snapshot under write load carries 100,000 of them, and making each
 * as a string first was most of the window's encoding). Undefined when an id is not of that kind.
 */
function* asciiIdsOf(lanes: Uint32Array, seqs: Float64Array, ids: FrozenIds): Generator<void, string | undefined, void> {
  const prefixes = ids.prefixes.map((p) => (/^[\x00-\x7f]*$/.test(p) ? Uint8Array.from(p, (c) => c.charCodeAt(0)) : undefined));
  let size = 0;
  for (let i = 0; i < lanes.length; i++) {
    const prefix = prefixes[lanes[i]];
    if (lanes[i] === OTHER_LANE || prefix === undefined) return undefined;
    size += prefix.length + 1 + 11; // at most 10 base-36 digits, and the separator
    if ((i + 1) % (4 * IDS_PER_STEP) === 0) yield;
  }
  const out = Buffer.allocUnsafe(size);
  // The base-36 digits of the previous id's sequence, least significant first, as digit values.
  // A proposer's ids are mostly consecutive in the window, so the next one's digits are usually
  // the previous ones plus one: a carry, not a conversion.
  const digits = new Uint8Array(11);
  let width = 0;
  let last = -2;
  let at = 0;
  for (let i = 0; i < lanes.length; i++) {
    if (i > 0) out[at++] = 0x0a;
    // Byte by byte: prefixes are a few bytes, shorter than a native copy's call.
    const prefix = prefixes[lanes[i]] as Uint8Array;
    for (let k = 0; k < prefix.length; k++) out[at++] = prefix[k];
    out[at++] = 0x2e;
    const seq = seqs[i];
    if (seq === last + 1) {
      let k = 0;
      while (digits[k] === 35) digits[k++] = 0;
      digits[k]++;
      if (k === width) width++;
    } else {
      width = 0;
      let rest = seq;
      do {
        const q = Math.floor(rest / 36);
        digits[width++] = rest - q * 36;
        rest = q;
      } while (rest > 0);
      digits.fill(0, width);
    }
    last = seq;
    for (let k = width - 1; k >= 0; k--) out[at++] = BASE36[digits[k]];
    if ((i + 1) % IDS_PER_STEP === 0) yield;
  }
  return out.toString('latin1', 0, at);
}

function columnsOf(ids: string, indexes: Float64Array, ats: Float64Array, results: unknown[]): RequestColumns {
  return { ids, index: float64s(indexes), at: float64s(ats), outcomes: runsOf(results) };
}

/** Consecutive identical results (by identity: `true`, `false`, the same refusal object) as one run. */
function runsOf(results: readonly unknown[]): [number, Outcome][] {
  const runs: [number, Outcome][] = [];
  for (let i = 0; i < results.length; ) {
    let j = i + 1;
    while (j < results.length && results[j] === results[i]) j++;
    runs.push([j - i, outcomeOf(results[i])]);
    i = j;
  }
  return runs;
}

/**
 * [run, outcome] pairs, as msgpack arrays of two (the bytes runsOf()'s array encodes to). A step
 * ends after `step` runs, or after any run whose outcome is an object (a result that may be a
 * transaction's tens of rows), so a step encodes a bounded amount however the window is made up.
 */
function* outcomeSteps(runs: readonly [number, Outcome][], out: StreamOut, step: number): Generator<void, void, void> {
  let inStep = 0;
  for (const [run, outcome] of runs) {
    out.pair(run, outcome);
    const value = 'value' in outcome ? outcome.value : undefined;
    if (++inStep >= step || (typeof value === 'object' && value !== null)) {
      inStep = 0;
      yield;
    }
  }
}

/** The column's doubles as little-endian bytes (a view of the copy on little-endian machines). */
function float64s(values: Float64Array): Uint8Array {
  if (LITTLE_ENDIAN) return Buffer.from(values.buffer, values.byteOffset, values.byteLength);
  const bytes = Buffer.allocUnsafe(values.length * 8);
  for (let i = 0; i < values.length; i++) bytes.writeDoubleLE(values[i], i * 8);
  return bytes;
}

/**
 * The column's doubles, copied out of the snapshot's bytes in one native copy on little-endian
 * machines (a window of 100,000s of requests read one by one held a restore's step for 20–56 ms).
 */
function fromFloat64s(bytes: Uint8Array): Float64Array {
  if (bytes.byteLength % 8 !== 0) throw new Error('request window column is not a whole number of float64s');
  const out = new Float64Array(bytes.byteLength / 8);
  if (LITTLE_ENDIAN) {
    new Uint8Array(out.buffer).set(bytes);
    return out;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat64(i * 8, true);
  return out;
}
