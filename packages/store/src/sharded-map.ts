// A Map kept as several smaller Maps once it is large, for the tables that reach hundreds of
// thousands of keys (issues #34, #30).
//
// V8 grows a Map by building a table twice the size and re-inserting every entry, all in the one
// `set` that found the table full. The cost is the whole table's: on the slow VM of
// docs/benchmarks.md's large-state runs, the set that made a Map's 131,073rd entry took 44–47 ms and
// the 262,145th 49–66 ms (new large-object pages touched for the first time, then the rehash), so a
// restore of a gigabyte of KV stalled its event loop there, and so would the write that happened to
// add that key; a catalog of 131,073 nodes paid it in six Maps in one registration (131–172 ms).
// Split over SHARDS Maps by a hash of the key, each grows at a sixty-fourth of the size, and the
// largest single growth at a million keys is that of a 16,384-entry Map. Iteration visits the shards
// in turn: no caller here depends on insertion order.

const SHARDS = 64;
/**
 * Which shard holds `key`: FNV-1a over all of it. Every character, because the keys of one table
 * often share long prefixes and suffixes ("service/<id>/config", a counter between two long parts)
 * and differ anywhere between; a sample of positions put such sets in one shard. Any distribution is
 * correct; an uneven one only brings back the larger growth steps for its crowded shard. A
 * number key (a serial) is its own hash: consecutive serials fill the shards in turn.
 */
function shardOf(key: string | number): number {
  if (typeof key === 'number') return key & (SHARDS - 1);
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h ^ (h >>> 16)) & (SHARDS - 1);
}

/**
 * Below this many entries a ShardedMap is one Map: most maps of a table stay small (a service's
 * instances, a check ID's nodes), and 64 Maps each would cost them kilobytes. Past it, the entries
 * are dealt into the shards once (a few ms), and every later growth is a shard's.
 */
const SPLIT_AT = 256;

export class ShardedMap<K extends string | number, V> implements Iterable<[K, V]> {
  /** All entries while the map is small; undefined once split. */
  private one: Map<K, V> | undefined = new Map<K, V>();
  private shards: Map<K, V>[] = [];

  get(key: K): V | undefined {
    return this.one ? this.one.get(key) : this.shards[shardOf(key)].get(key);
  }

  has(key: K): boolean {
    return this.one ? this.one.has(key) : this.shards[shardOf(key)].has(key);
  }

  set(key: K, value: V): this {
    if (!this.one) {
      this.shards[shardOf(key)].set(key, value);
    } else {
      this.one.set(key, value);
      if (this.one.size > SPLIT_AT) this.split(this.one);
    }
    return this;
  }

  delete(key: K): boolean {
    return this.one ? this.one.delete(key) : this.shards[shardOf(key)].delete(key);
  }

  get size(): number {
    if (this.one) return this.one.size;
    let n = 0;
    for (const m of this.shards) n += m.size;
    return n;
  }

  *keys(): IterableIterator<K> {
    if (this.one) yield* this.one.keys();
    else for (const m of this.shards) yield* m.keys();
  }

  *values(): IterableIterator<V> {
    if (this.one) yield* this.one.values();
    else for (const m of this.shards) yield* m.values();
  }

  *entries(): IterableIterator<[K, V]> {
    if (this.one) yield* this.one.entries();
    else for (const m of this.shards) yield* m.entries();
  }

  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries();
  }

  private split(one: Map<K, V>): void {
    this.shards = Array.from({ length: SHARDS }, () => new Map<K, V>());
    for (const [k, v] of one) this.shards[shardOf(k)].set(k, v);
    this.one = undefined;
  }
}
