// What the agent's caches answer (cache/agent-cache.ts, the background-refreshed entries;
// cache/result-cache.ts, the prepared-query results): one type, from which the HTTP edge sets
// X-Cache and Age in one place (http/cached-read.ts setCacheHeaders).

/** What the servers said about the leader with a read (X-Registry-KnownLeader / -LastContact). */
export interface LeaderMeta {
  knownLeader: boolean;
  lastContactMs: number;
}

export interface CacheAnswer<T> {
  value: T;
  /** Whether the value came from the cache (X-Cache: HIT) rather than a fetch made for this request (MISS). */
  hit: boolean;
  /** Seconds since the value was last known fresh (Age, sent with a hit). */
  ageS: number;
  /**
   * The entry's index, where the cache keeps one (the agent cache: a read with `?index` waits past
   * it); the prepared-query result cache keeps none (its reads do not block).
   */
  index?: number;
  /**
   * The leader metadata of the fetch that made the value, LastContact grown by the time the refresh
   * has been failing (Consul's cached answers carry the fetch's QueryMeta). Absent when the
   * fetcher gives none.
   */
  meta?: LeaderMeta;
}

/** An answer of the agent cache: its entries always have an index. */
export type IndexedCacheAnswer<T> = CacheAnswer<T> & { index: number };
