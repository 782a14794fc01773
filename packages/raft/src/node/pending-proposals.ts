// Proposals waiting for their entry to be applied, keyed by log position. An entry applied at
// the same index with another term means ours was overwritten by a new leader: it failed.

interface Waiter {
  term: number;
  resolve(result: unknown): void;
  reject(err: Error): void;
}

export class PendingProposals {
  private readonly byIndex = new Map<number, Waiter>();

  get size(): number {
    return this.byIndex.size;
  }

  add(index: number, term: number, resolve: (r: unknown) => void, reject: (e: Error) => void): void {
    this.byIndex.set(index, { term, resolve, reject });
  }

  /** The entry at `index` was applied with `term`; `outcome` is the FSM's result or error. */
  applied(index: number, term: number, outcome: { result: unknown } | { error: Error }, lost: () => Error): void {
    const w = this.byIndex.get(index);
    if (!w) return;
    this.byIndex.delete(index);
    if (w.term !== term) w.reject(lost());
    else if ('error' in outcome) w.reject(outcome.error);
    else w.resolve(outcome.result);
  }

  /** Fail every waiter at or below `index` (their entries were replaced by a snapshot). */
  failThrough(index: number, err: () => Error): void {
    for (const [i, w] of this.byIndex) {
      if (i <= index) {
        this.byIndex.delete(i);
        w.reject(err());
      }
    }
  }

  failAll(err: () => Error): void {
    const all = [...this.byIndex.values()];
    this.byIndex.clear();
    for (const w of all) w.reject(err());
  }
}
