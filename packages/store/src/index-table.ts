import { pairStream, type Stream } from './snapshot-stream';

/**
 * Consul's "index table", finer grained: the Raft index at which each watch key last changed.
 * A per-entity key ("service:web") is dropped when its entity disappears; reads of a missing key fall
 * back to its table key ("services"), which was bumped by that same disappearance, so a key's index
 * never moves backwards while the map does not grow with every name ever seen.
 */
export class IndexTable {
  private readonly indexes: Map<string, number>;

  constructor(
    private readonly fallbackOf: (key: string) => string | undefined,
    entries: Iterable<readonly [string, number]> = [],
  ) {
    this.indexes = new Map(entries);
  }

  /** The index of `key`, else of its fallback table key, else 0. */
  get(key: string): number {
    const own = this.indexes.get(key);
    if (own !== undefined) return own;
    const fallback = this.fallbackOf(key);
    return (fallback !== undefined ? this.indexes.get(fallback) : undefined) ?? 0;
  }

  /** The highest index among `keys` (0 for none). */
  max(keys: readonly string[]): number {
    let m = 0;
    for (const k of keys) m = Math.max(m, this.get(k));
    return m;
  }

  set(key: string, index: number): void {
    this.indexes.set(key, index);
  }

  delete(key: string): void {
    this.indexes.delete(key);
  }

  has(key: string): boolean {
    return this.indexes.has(key);
  }

  entries(): [string, number][] {
    return [...this.indexes.entries()];
  }

  /** entries() as of now, serialised later. */
  capture(): Stream {
    return pairStream([...this.indexes.keys()], [...this.indexes.values()]);
  }
}
