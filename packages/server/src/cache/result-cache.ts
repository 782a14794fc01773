import { monotonicMs } from '../time';
import type { CacheAnswer } from './cache-answer';
// The agent's simple cache for `?cached` prepared-query executes (spec "Agent caching", simple form):
// a hit is served while the entry is younger than the TTL and the request's Cache-Control allows it
// (max-age, must-revalidate / max-age=0 always re-fetch); when re-fetching fails, stale-if-error
// lets an entry not older than that many seconds answer instead of the error. Bounded in entries.

export interface CacheControl {
  maxAgeS?: number;
  staleIfErrorS?: number;
  mustRevalidate: boolean;
}

interface Entry<V> {
  value: V;
  fetchedAt: number;
}

export class SimpleCache<V> {
  private readonly entries = new Map<string, Entry<V>>();

  constructor(
    private readonly maxEntries = 1024,
    private readonly ttlMs = 3 * 24 * 3600_000,
    private readonly now: () => number = monotonicMs,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  async get(key: string, cc: CacheControl, fetch: () => Promise<V>): Promise<CacheAnswer<V>> {
    const entry = this.entries.get(key);
    const ageMs = entry ? this.now() - entry.fetchedAt : 0;
    if (entry && ageMs < this.ttlMs && !cc.mustRevalidate && (cc.maxAgeS === undefined || ageMs <= cc.maxAgeS * 1000)) {
      return { value: entry.value, hit: true, ageS: Math.round(ageMs / 1000) };
    }
    try {
      const value = await fetch();
      this.entries.delete(key);
      this.entries.set(key, { value, fetchedAt: this.now() });
      while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
      return { value, hit: false, ageS: 0 };
    } catch (err) {
      if (entry && cc.staleIfErrorS !== undefined && ageMs <= cc.staleIfErrorS * 1000) {
        return { value: entry.value, hit: true, ageS: Math.round(ageMs / 1000) };
      }
      throw err;
    }
  }
}
