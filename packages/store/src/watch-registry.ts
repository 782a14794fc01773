// Blocking queries park a one-shot callback on the watch keys their result depends on. Watchers are
// filed per key so a write costs O(watchers of the keys it bumped), whatever the total number parked.

interface Watcher {
  readonly keys: readonly string[];
  readonly fire: () => void;
}

export class WatchRegistry {
  private readonly byKey = new Map<string, Set<Watcher>>();

  /** Park `fire` on `keys`; it runs at most once. Returns a cancel function (idempotent). */
  add(keys: readonly string[], fire: () => void): () => void {
    const watcher: Watcher = { keys: [...new Set(keys)], fire };
    for (const k of watcher.keys) {
      let set = this.byKey.get(k);
      if (!set) this.byKey.set(k, (set = new Set()));
      set.add(watcher);
    }
    return () => this.remove(watcher);
  }

  /** Detach and return every watcher parked on any of `keys`. */
  take(keys: Iterable<string>): Watcher[] {
    const taken = new Set<Watcher>();
    for (const k of keys) {
      const set = this.byKey.get(k);
      if (set) for (const w of set) taken.add(w);
    }
    for (const w of taken) this.remove(w);
    return [...taken];
  }

  /** Detach and return every parked watcher. */
  takeAll(): Watcher[] {
    return this.take([...this.byKey.keys()]);
  }

  /** How many watchers are parked (for tests and metrics). */
  get size(): number {
    const all = new Set<Watcher>();
    for (const set of this.byKey.values()) for (const w of set) all.add(w);
    return all.size;
  }

  private remove(watcher: Watcher): void {
    for (const k of watcher.keys) {
      const set = this.byKey.get(k);
      if (!set) continue;
      set.delete(watcher);
      if (set.size === 0) this.byKey.delete(k);
    }
  }
}

/**
 * Run callbacks one by one; a throwing callback must not stop the others nor the apply that woke it,
 * so its error is rethrown on a fresh microtask where it surfaces as an uncaught error.
 */
export function fireAll(watchers: readonly { fire: () => void }[]): void {
  for (const w of watchers) {
    try {
      w.fire();
    } catch (err) {
      queueMicrotask(() => {
        throw err;
      });
    }
  }
}
