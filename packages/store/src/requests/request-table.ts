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
import { Stream } from '../snapshot-stream';

/** The identity of a write, stamped on its Raft entry by the leader that proposed it. */
export interface RequestStamp {
  /** Unique per write, fixed where the write entered the cluster and kept across every retry. */
  id: string;
  /** The proposing leader's wall clock (ms); ages the window out identically on every server. */
  at: number;
}

/**
 * Bounds of the window. A retry is only ever sent within the entering server's write budget (7 s)
 * and an entry can only commit while a leader that holds it is in office, so two minutes leaves a
 * wide margin; the count bound caps memory (~100 B per entry) at sustained 800 writes/s for the
 * whole age bound and still covers 100,000 writes — over 10 s of the fastest measured rate.
 */
export const REQUEST_WINDOW = { maxAgeMs: 120_000, maxEntries: 100_000 } as const;

/** A result as kept in the window: a value, or the message of the CommandError it was refused with. */
type Outcome = { value: unknown } | { refused: string };

/**
 * Never changed once recorded (a snapshot may hold it). One small object per request: the result
 * is kept as applied (a CommandError for a refusal) and only turned into an Outcome when written out.
 */
interface AppliedRequest {
  readonly index: number;
  readonly at: number;
  readonly result: unknown;
}

const outcomeOf = (result: unknown): Outcome => (result instanceof CommandError ? { refused: result.message } : { value: result });
const resultOf = (outcome: Outcome): unknown => ('refused' in outcome ? new CommandError(outcome.refused) : outcome.value);

export type RequestTableDump = [id: string, index: number, at: number, outcome: Outcome][];

export class RequestTable {
  private readonly applied = new Map<string, AppliedRequest>();
  /**
   * Ids in apply order from `head` on: the eviction queue. Not the Map's own order — iterating a
   * Map from its start walks every entry deleted there since its last rehash, which made each
   * eviction O(window) (a 2–3x slower apply at a full window).
   */
  private order: string[] = [];
  private head = 0;

  /** The request as first applied (its `result`), or undefined when it is not in the window. */
  get(id: string): AppliedRequest | undefined {
    return this.applied.get(id);
  }

  /** Remember that `stamp` was applied at `index` with `result`, then age the window. */
  record(stamp: RequestStamp, index: number, result: unknown): void {
    this.applied.set(stamp.id, { index, at: stamp.at, result });
    this.order.push(stamp.id);
    this.evict(stamp.at);
  }

  get size(): number {
    return this.applied.size;
  }

  private evict(now: number): void {
    while (this.head < this.order.length) {
      const id = this.order[this.head]!;
      const r = this.applied.get(id)!;
      if (this.applied.size <= REQUEST_WINDOW.maxEntries && r.at >= now - REQUEST_WINDOW.maxAgeMs) break;
      this.applied.delete(id);
      this.head++;
    }
    // Drop the evicted prefix now and then, so the queue stays about the size of the window.
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
  }

  dump(): RequestTableDump {
    return [...this.applied].map(([id, r]) => [id, r.index, r.at, outcomeOf(r.result)]);
  }

  /** dump() as of now, serialised later: the window's ids and rows in apply order. */
  capture(): Stream {
    const ids = [...this.applied.keys()];
    const rows = [...this.applied.values()];
    return new Stream(ids.length, function* (out, step) {
      for (let i = 0; i < ids.length; i++) {
        const r = rows[i];
        out.quad(ids[i], r.index, r.at, outcomeOf(r.result));
        if ((i + 1) % step === 0) yield;
      }
    });
  }

  static load(dump: RequestTableDump | undefined): RequestTable {
    const table = new RequestTable();
    for (const [id, index, at, outcome] of dump ?? []) {
      table.applied.set(id, { index, at, result: resultOf(outcome) });
      table.order.push(id);
    }
    return table;
  }

  invariants(lastIndex: number): string[] {
    const problems: string[] = [];
    let prev = 0;
    for (const [id, r] of this.applied) {
      if (r.index <= prev) problems.push(`request ${id} recorded out of apply order`);
      if (r.index > lastIndex) problems.push(`request ${id} recorded after the last applied index`);
      prev = r.index;
    }
    return problems;
  }
}
