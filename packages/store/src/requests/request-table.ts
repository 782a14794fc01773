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
import { Fields, Lazy, runSync } from '../snapshot-stream';

/** The identity of a write, stamped on its Raft entry by the leader that proposed it. */
export interface RequestStamp {
  /** Unique per write, fixed where the write entered the cluster and kept across every retry. */
  id: string;
  /** The proposing leader's wall clock (ms); ages the window out identically on every server. */
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

export class RequestTable {
  /**
   * Each request's position in the columns below. Positions are absolute (`base` is the position of
   * column slot 0), so dropping the evicted prefix of the columns does not touch the Map. Columns
   * rather than one object per request: a full window is 100,000 live entries on every server, and
   * a record object each was old-generation garbage the GC had to trace on every major collection.
   */
  private readonly positions = new Map<string, number>();
  private ids: string[] = [];
  private indexes: number[] = [];
  private ats: number[] = [];
  private results: unknown[] = [];
  /** Column slots before `head` are evicted; slot i holds position base + i. */
  private head = 0;
  private base = 0;

  /** The request as first applied (its `result`), or undefined when it is not in the window. */
  get(id: string): { result: unknown } | undefined {
    const pos = this.positions.get(id);
    return pos === undefined ? undefined : { result: this.results[pos - this.base] };
  }

  /** Remember that `stamp` was applied at `index` with `result`, then age the window. */
  record(stamp: RequestStamp, index: number, result: unknown): void {
    // Deterministic on every server (the same entry), and never true of ids this cluster makes.
    if (stamp.id.includes(SEPARATOR)) return;
    const size = this.positions.size;
    this.push(stamp.id, index, stamp.at, result);
    // A first copy is recorded without a lookup (store.ts). Were the id in the window already — a
    // copy not marked as a re-send, which rpc.ts never proposes — the Map did not grow: keep only
    // the newest record, so the window stays one record per id.
    if (this.positions.size === size) this.dropOlderCopy(stamp.id);
    this.evict(stamp.at);
  }

  /** The rare path of record(): removes the older record of `id` (a pass over the window). */
  private dropOlderCopy(id: string): void {
    const last = this.ids.length - 1;
    const i = this.ids.indexOf(id, this.head);
    if (i < 0 || i === last) return;
    for (const column of [this.ids, this.indexes, this.ats, this.results] as unknown[][]) column.splice(i, 1);
    for (let j = i; j < this.ids.length; j++) this.positions.set(this.ids[j], this.base + j);
  }

  get size(): number {
    return this.positions.size;
  }

  private evict(now: number): void {
    const oldest = now - REQUEST_WINDOW.maxAgeMs;
    let head = this.head;
    while (head < this.ids.length && (this.ids.length - head > REQUEST_WINDOW.maxEntries || this.ats[head] < oldest)) {
      this.positions.delete(this.ids[head]);
      this.results[head] = undefined;
      head++;
    }
    this.head = head;
    // Drop the evicted prefix now and then, so the columns stay about the size of the window.
    if (head > 1024 && head * 2 > this.ids.length) {
      this.ids = this.ids.slice(head);
      this.indexes = this.indexes.slice(head);
      this.ats = this.ats.slice(head);
      this.results = this.results.slice(head);
      this.base += head;
      this.head = 0;
    }
  }

  dump(): RequestColumns {
    return columnsOf(this.ids.slice(this.head), this.indexes.slice(this.head), this.ats.slice(this.head), this.results.slice(this.head));
  }

  /** dump() as of now, serialised later (the columns are copied now: a few pointer copies). */
  capture(): Fields {
    const ids = this.ids.slice(this.head);
    const indexes = this.indexes.slice(this.head);
    const ats = this.ats.slice(this.head);
    const results = this.results.slice(this.head);
    // Each column becomes one value when its turn comes; the join and the copies are single passes.
    return new Fields([
      ['ids', new Lazy(() => ids.join(SEPARATOR))],
      ['index', new Lazy(() => float64s(indexes))],
      ['at', new Lazy(() => float64s(ats))],
      ['outcomes', new Lazy(() => runsOf(results))],
    ]);
  }

  static load(dump: RequestTableDump | undefined): RequestTable {
    return runSync(RequestTable.loadSteps(dump));
  }

  /** load() a step of about `step` requests at a time (a restore rebuilds the window beside other work). */
  static *loadSteps(dump: RequestTableDump | undefined, step = 8192): Generator<void, RequestTable, void> {
    const table = new RequestTable();
    if (!dump) return table;
    if (Array.isArray(dump)) {
      for (const [id, index, at, outcome] of dump) table.push(id, index, at, resultOf(outcome));
      return table;
    }
    const ids = dump.ids === '' ? [] : dump.ids.split(SEPARATOR);
    const indexes = fromFloat64s(dump.index);
    const ats = fromFloat64s(dump.at);
    if (indexes.length !== ids.length || ats.length !== ids.length) throw new Error('request window columns of different lengths');
    yield;
    let i = 0;
    for (const [run, outcome] of dump.outcomes) {
      const result = resultOf(outcome);
      for (let k = 0; k < run; k++, i++) {
        table.push(ids[i], indexes[i], ats[i], result);
        if ((i + 1) % step === 0) yield;
      }
    }
    if (i !== ids.length) throw new Error('request window outcomes do not cover its ids');
    return table;
  }

  private push(id: string, index: number, at: number, result: unknown): void {
    this.positions.set(id, this.base + this.ids.length);
    this.ids.push(id);
    this.indexes.push(index);
    this.ats.push(at);
    this.results.push(result);
  }

  invariants(lastIndex: number): string[] {
    const problems: string[] = [];
    let prev = 0;
    for (let i = this.head; i < this.ids.length; i++) {
      const id = this.ids[i];
      if (this.positions.get(id) !== this.base + i) problems.push(`request ${id} is not where the window's map says`);
      if (this.indexes[i] <= prev) problems.push(`request ${id} recorded out of apply order`);
      if (this.indexes[i] > lastIndex) problems.push(`request ${id} recorded after the last applied index`);
      prev = this.indexes[i];
    }
    if (this.positions.size !== this.ids.length - this.head) problems.push('the window\'s map and columns hold different requests');
    return problems;
  }
}

function columnsOf(ids: string[], indexes: number[], ats: number[], results: unknown[]): RequestColumns {
  return { ids: ids.join(SEPARATOR), index: float64s(indexes), at: float64s(ats), outcomes: runsOf(results) };
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

function float64s(values: readonly number[]): Uint8Array {
  const bytes = Buffer.allocUnsafe(values.length * 8);
  for (let i = 0; i < values.length; i++) bytes.writeDoubleLE(values[i], i * 8);
  return bytes;
}

function fromFloat64s(bytes: Uint8Array): number[] {
  if (bytes.byteLength % 8 !== 0) throw new Error('request window column is not a whole number of float64s');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Array<number>(bytes.byteLength / 8);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat64(i * 8, true);
  return out;
}
