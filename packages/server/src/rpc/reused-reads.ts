// Non-blocking reads of the same endpoint with the same arguments and token give the same
// answer until the store applies another entry. Many clients polling one service therefore
// cost one store walk per change, and — because the answer's value is marked shared here — one JSON
// encoding per change in the HTTP layer (http/json-encoder.ts, given this object when the agent is
// composed). Only endpoints whose routes return the value untouched may be reused: an endpoint says
// so itself (`reuse: true` in its `read({...})`, endpoints/catalog-reads.ts and health-reads.ts),
// and rpc.ts asks only those here.
// A write still starts a new memory, but what follows is not a full rebuild where it was the
// cost (issue #16): the catalog's node listing is kept sorted in the store with one shared output
// object per row (store/catalog/node-listing.ts), and large lists are written in slices with each
// shared row's JSON kept (http/sliced-json.ts), so a write re-encodes only the rows it changed.
import type { QueryResult } from './blocking';

/** Distinct reads remembered between two applies; past this the memory starts afresh. */
const MAX_ENTRIES = 1024;

/**
 * The values handed to more than one request since the memory last started afresh. The HTTP edge
 * keeps the JSON of these (and only these) until `generation` moves on.
 */
export interface SharedValues {
  isShared(value: object): boolean;
  /** Changes whenever the memory starts afresh: nothing kept for an older generation may be reused. */
  readonly generation: number;
}

export class ReusedReads implements SharedValues {
  private entries = new Map<string, QueryResult>();
  private at = -1;
  private shared = new WeakSet<object>();
  private gen = 0;

  get generation(): number {
    return this.gen;
  }

  isShared(value: object): boolean {
    return this.shared.has(value);
  }

  /**
   * The result of `run`, or of the identical read made since the store reached `storeIndex`. A read
   * that had to wait (a large listing's first build: settled-read.ts) is not kept: only answers
   * made at `storeIndex` are.
   */
  get(storeIndex: number, name: string, token: string | undefined, args: unknown, run: () => QueryResult): QueryResult;
  get(
    storeIndex: number,
    name: string,
    token: string | undefined,
    args: unknown,
    run: () => QueryResult | Promise<QueryResult>,
  ): QueryResult | Promise<QueryResult>;
  get(
    storeIndex: number,
    name: string,
    token: string | undefined,
    args: unknown,
    run: () => QueryResult | Promise<QueryResult>,
  ): QueryResult | Promise<QueryResult> {
    if (storeIndex !== this.at || this.entries.size >= MAX_ENTRIES) {
      this.entries = new Map();
      this.at = storeIndex;
      this.shared = new WeakSet();
      this.gen++;
    }
    const key = `${name}\u0000${token ?? ''}\u0000${JSON.stringify(args)}`;
    let result = this.entries.get(key);
    if (!result) {
      const made = run();
      if (made instanceof Promise) return made;
      result = made;
      if (typeof result.value === 'object' && result.value !== null) this.shared.add(result.value);
      this.entries.set(key, result);
    }
    return result;
  }
}
