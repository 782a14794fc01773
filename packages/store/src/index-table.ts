import { pairStream, type Stream } from './snapshot-stream';
import { ShardedMap } from './sharded-map';

/**
 * Consul's "index table", finer grained: the Raft index at which each watch key last changed.
 * A per-entity key ("service:web") is dropped when its entity disappears; reads of a missing key fall
 * back to its table key ("services"), which was bumped by that same disappearance, so a key's index
 * never moves backwards while the map does not grow with every name ever seen.
 */
export class IndexTable {
  /** Sharded once large: a key per node, so a catalog of 131,072 nodes grew it in one write (sharded-map.ts). */
  private readonly indexes: ShardedMap<string, number>;
  /**
   * The Raft index of the last snapshot restore. A restore brings back older indexes; every read
   * after it answers at least the restore's index (the RPC layer's read runner applies it), so a
   * blocking query holding an index from before the restore returns at once (issue #29 item 13)
   * and one that waits with an index from after it still waits. It lives here because this table
   * is what a snapshot carries of the indexes: kept there under FLOOR_KEY, so that a server that
   * installs a later snapshot answers the same indexes.
   */
  private floor = 0;

  constructor(
    private readonly fallbackOf: (key: string) => string | undefined,
    entries: Iterable<readonly [string, number]> = [],
  ) {
    this.indexes = new ShardedMap();
    for (const [key, index] of entries) this.load(key, index);
  }

  /** The index of `key`, else of its fallback table key, else 0. */
  get(key: string): number {
    const own = this.indexes.get(key);
    if (own !== undefined) return own;
    const fallback = this.fallbackOf(key);
    return (fallback !== undefined ? this.indexes.get(fallback) : undefined) ?? 0;
  }

  /** The lowest index a read may answer (the Raft index of the last restore; 0 for none). */
  get readFloor(): number {
    return this.floor;
  }

  /** Reads answer at least `index` from now on (a restore applied at `index`). */
  raiseFloor(index: number): void {
    this.floor = Math.max(this.floor, index);
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

  /** One entry of a snapshot's index table (capture()), the floor's included. */
  load(key: string, index: number): void {
    if (key === FLOOR_KEY) this.floor = index;
    else this.indexes.set(key, index);
  }

  entries(): [string, number][] {
    return [...this.indexes.entries()];
  }

  /** entries() as of now and the floor, serialised later (load() reads each back). */
  capture(): Stream {
    const keys = [...this.indexes.keys()];
    const values = [...this.indexes.values()];
    if (this.floor > 0) {
      keys.push(FLOOR_KEY);
      values.push(this.floor);
    }
    return pairStream(keys, values);
  }
}

/** The floor's key in a snapshot's index entries: no watch key starts with a NUL byte. */
const FLOOR_KEY = '\u0000restore-floor';
